// Copies the share link of the current view.
import { useState } from 'react';
import { currentLink } from '../state/share-link';

export function CopyLinkButton() {
  const [copied, setCopied] = useState<string | null>(null);
  return (
    <button
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
      {copied ?? 'Copy link'}
    </button>
  );
}
