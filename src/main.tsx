import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClientProvider } from '@tanstack/react-query';
import { installAutomation } from './state/automation';
import { derived } from './state/derived';
import { App } from './views/App';
import './views/app.css';

installAutomation();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={derived}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
