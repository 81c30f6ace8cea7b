// Copies the share link of the current view (once the view's source has one: a chosen file is named
// by its hash, which comes a moment after its first view).
import { useState } from 'react';
import { useSession } from '../state/session-store';
import { currentLink } from '../state/share-link';

export function CopyLinkButton() {
  const [copied, setCopied] = useState<string | null>(null);
  const waiting = useSession((s) => s.summary !== null && s.sourceLink === null);
  return (
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
      {waiting ? 'Copy link (hashing the file…)' : (copied ?? 'Copy link')}
    </button>
  );
}
