// A snapshot the page was launched with, rather than one a user chose: the file `splitscope open`
// serves beside the page (?open=NAME), or the one a `splitscope report` file carries inside it.
import { OPEN_PATH, REPORT_SNAPSHOT_ID } from '../lib/launch-names';

export interface LaunchFile {
  file: File;
  /** The config the report was written under (its --conf), if any. */
  conf: string | null;
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replace(/\s+/g, ''));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** The launch file, if there is one; a served file that cannot be fetched is an error naming it. */
export async function launchFile(): Promise<LaunchFile | null> {
  const carried = document.getElementById(REPORT_SNAPSHOT_ID);
  if (carried?.textContent) {
    const name = carried.dataset.name ?? 'snapshot.pickle';
    return { file: new File([fromBase64(carried.textContent)], name), conf: carried.dataset.conf ?? null };
  }
  const params = new URLSearchParams(location.search);
  const name = params.get('open');
  if (name === null) return null;
  const response = await fetch(`${import.meta.env.BASE_URL}${OPEN_PATH}${encodeURIComponent(name)}`);
  if (!response.ok) throw new Error(`${name} could not be fetched from splitscope open (${response.status}): is it still running?`);
  // The address keeps what the share link writes, not the launch.
  params.delete('open');
  const rest = params.toString();
  history.replaceState(null, '', `${location.pathname}${rest ? `?${rest}` : ''}${location.hash}`);
  return { file: new File([await response.blob()], name), conf: null };
}
