// Copies the share link of the current view (once the view's source has one: a chosen file is named
// by its hash, which comes a moment after its first view). The button's label never changes: a
// longer one would wrap the header and resize the views below, redrawing them mid-open. What it is
// doing is said in a note laid over the page under it.
import { useState } from 'react';
import { useSession } from '../state/session-store';
import { currentLink } from '../state/share-link';

export function CopyLinkButton() {
  const [copied, setCopied] = useState<string | null>(null);
  const waiting = useSession((s) => s.summary !== null && s.sourceLink === null);
  const note = waiting ? 'hashing the file…' : copied;
  return (
    <span className="copy-link">
      <button
        disabled={waiting}
        title={waiting ? 'The file is being hashed: its link names it by its SHA-256.' : undefined}
        onClick={async () => {
          const link = currentLink();
          try {
            await navigator.clipboard.writeText(link);
            setCopied('Link copied');
          } catch {
            // No clipboard permission (or an insecure origin): the address bar holds the same link.
            setCopied('Copy it from the address bar');
          }
          setTimeout(() => setCopied(null), 2500);
        }}
      >
        Copy link
      </button>
      <span role="status" className="copy-note">
        {note}
      </span>
    </span>
  );
}
