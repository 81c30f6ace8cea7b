import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { installAutomation } from './state/automation';
import { App } from './views/App';
import './views/app.css';

installAutomation();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
