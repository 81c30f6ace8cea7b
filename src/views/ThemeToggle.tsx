// Dark or light, following the system until the user picks one (kept in localStorage).
import { useEffect, useState } from 'react';

type Theme = 'system' | 'light' | 'dark';
const KEY = 'splitscope-theme';

export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(() => (localStorage.getItem(KEY) as Theme | null) ?? 'system');
  useEffect(() => {
    if (theme === 'system') {
      delete document.documentElement.dataset.theme;
      localStorage.removeItem(KEY);
    } else {
      document.documentElement.dataset.theme = theme;
      localStorage.setItem(KEY, theme);
    }
  }, [theme]);
  const next: Theme = theme === 'system' ? 'dark' : theme === 'dark' ? 'light' : 'system';
  return (
    <button className="theme" onClick={() => setTheme(next)} aria-label={`Theme: ${theme} (switch to ${next})`}>
      {theme === 'dark' ? '☾ dark' : theme === 'light' ? '☀ light' : '◐ system'}
    </button>
  );
}
