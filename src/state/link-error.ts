/** A share link that cannot be opened: what was wrong with it, in words for the user. */
export class LinkError extends Error {
  override name = 'LinkError';
}
