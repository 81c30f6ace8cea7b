// The share link's state: one zod schema per version, the one source of the view's saved types
// (as Perfetto's state_serialization_schema.ts). A link of an older version opens through its
// `migrate` step into the current shape; a field added later gets a default (or stays optional), so
// older links keep opening.
import { z } from 'zod';
import { replaySettingsSchema } from '../worker/replay-settings';

/** A snapshot file travels in the link up to this size; larger ones by name and hash. */
export const MAX_EMBEDDED_FILE_BYTES = 256 * 1024;

const finite = z.number().finite();

/** A snapshot file: its name and SHA-256, and the file itself when it is small enough. */
const linkFileSchema = z.object({
  kind: z.literal('file'),
  name: z.string().max(512),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** The file itself, base64url, when it was small enough to embed. */
  data: z.string().max(Math.ceil((MAX_EMBEDDED_FILE_BYTES * 4) / 3) + 4).optional(),
  /** Else its size in bytes, so that a page asking for it can say which file it means (absent in older links). */
  size: z.number().int().nonnegative().optional(),
});
export type LinkFile = z.infer<typeof linkFileSchema>;

export const linkSourceSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('workload'), id: z.string().max(64), params: z.record(z.string().max(64), finite) }),
  z.object({ kind: z.literal('sample') }),
  linkFileSchema,
  /** A predicted run: the recordings it is predicted from, each with the size it ran at (the size predicted is the settings'). */
  z.object({ kind: z.literal('prediction'), recordings: z.array(z.object({ size: finite.positive(), file: linkFileSchema })).min(2).max(8) }),
]);
export type LinkSource = z.infer<typeof linkSourceSchema>;

/** The panels a link can open. */
export const PANEL_IDS = ['guide', 'export', 'ooms', 'explorer', 'stacks', 'events', 'recordings', 'prediction-chart'] as const;
const panelSchema = z.enum(PANEL_IDS);
export type PanelId = z.infer<typeof panelSchema>;

/** The segment map's zoom: d3's scale, and its x translation as a fraction of the map's width. */
const mapZoomSchema = z.object({ k: finite.min(1).max(1e12), x: finite.min(-1e12).max(1) });
export type MapZoom = z.infer<typeof mapZoomSchema>;

/** How the view looks: the segment map's zoom and pinned allocation (a request id), the open panels. */
const viewLookSchema = z.object({
  zoom: mapZoomSchema.nullable(),
  pinned: z.number().int().nonnegative().nullable(),
  panels: z.array(panelSchema).max(PANEL_IDS.length),
});
export type ViewLook = z.infer<typeof viewLookSchema>;
export const DEFAULT_LOOK: ViewLook = { zoom: null, pinned: null, panels: ['guide'] };

/** Version 1: the replay settings, the cursor and the look side by side, each left out at its default. */
const linkStateV1 = replaySettingsSchema.extend({
  v: z.literal(1),
  source: linkSourceSchema,
  /** 0-based request index; null: the last request. */
  cursor: z.number().int().nonnegative().nullable(),
  zoom: viewLookSchema.shape.zoom.unwrap().optional(),
  pinned: viewLookSchema.shape.pinned.unwrap().optional(),
  /** Absent: DEFAULT_LOOK's. */
  panels: viewLookSchema.shape.panels.optional(),
  /** Configs compared side by side (the comparison is open). */
  compare: z.array(z.string().max(2000)).min(2).max(4).optional(),
  /** Another snapshot compared with the source (Other recordings). */
  compareWith: linkFileSchema.optional(),
  /** The search box's query. */
  find: z.string().max(500).optional(),
  /** The stack view's selection: a frame (its path from the root) or an allocation site. */
  stack: z.union([z.object({ path: z.array(z.string().max(2000)).max(500) }), z.object({ site: z.string().max(2000) })]).optional(),
});

/** The state links are written in. */
export type LinkState = z.infer<typeof linkStateV1>;
export const LINK_VERSION = 1;

/** Each version a link may carry, with the step that brings its state to the current version. */
export const LINK_VERSIONS: ReadonlyMap<number, { schema: z.ZodType; migrate(state: unknown): LinkState }> = new Map([
  [1, { schema: linkStateV1, migrate: (state: unknown) => state as LinkState }],
]);
