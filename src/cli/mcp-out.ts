// Where splitscope mcp writes: one folder, named when the server starts (--out-dir) or made for it (a new
// temporary folder). A tool's `out` is a path in that folder; one that leaves it (an absolute path
// elsewhere, `..`, a symbolic link out, of a folder on the way or of the file itself) is refused by name
// before any work. Paths are compared after realpath, so a link cannot lead a write outside.
import { lstatSync, mkdtempSync, realpathSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UsageError } from './cli-format';

/** The folder the tools write into: `dir` (which must exist), or a new temporary one; its real path. */
export function outFolder(dir: string | undefined): string {
  if (dir === undefined) return realpathSync(mkdtempSync(join(tmpdir(), 'splitscope-mcp-')));
  let st;
  try {
    st = statSync(dir);
  } catch {
    throw new UsageError(`--out-dir ${dir} does not exist: make it first, or leave --out-dir out for a new temporary folder`);
  }
  if (!st.isDirectory()) throw new UsageError(`--out-dir ${dir} is not a folder`);
  return realpathSync(dir);
}

/** `path` lies inside `folder` (not the folder itself). */
function inside(folder: string, path: string): boolean {
  const r = relative(folder, path);
  return r !== '' && r !== '..' && !r.startsWith(`..${sep}`) && !isAbsolute(r);
}

/**
 * `out` (relative to `folder`, or absolute inside it) as the real path to write; refused, naming the
 * parameter `param`, where it leaves `folder` or its folder does not exist. `folder` is a real path.
 */
export function confinedOut(folder: string, out: string, param: string): string {
  if (out.trim() === '') throw new UsageError(`${param} is empty: name a file in ${folder}`);
  if (out.includes('\0')) throw new UsageError(`${param} holds a NUL character: name a file in ${folder}`);
  const target = resolve(folder, out);
  const outside = (how: string): UsageError =>
    new UsageError(`${param}: ${out} ${how} the folder this server writes into, ${folder}: name a file in it (a path relative to it, e.g. ${basename(target) || 'out.html'})`);
  if (!inside(folder, target)) throw outside('is outside');
  let parent: string;
  try {
    parent = realpathSync(dirname(target));
  } catch {
    throw new UsageError(`${param}: the folder of ${out} does not exist in ${folder}`);
  }
  if (parent !== folder && !inside(folder, parent)) throw outside('leads (through a symbolic link) outside');
  let real = join(parent, basename(target));
  let link = false;
  try {
    link = lstatSync(real).isSymbolicLink();
  } catch {
    // Not there yet: written new.
  }
  if (link) {
    try {
      real = realpathSync(real);
    } catch {
      throw new UsageError(`${param}: ${out} is a symbolic link to nothing; name another file`);
    }
    if (!inside(folder, real)) throw outside('leads (through a symbolic link) outside');
  }
  return real;
}
