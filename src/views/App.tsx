import { useEffect, useId, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { SAMPLE_NAME, useSession, useViewKey } from '../state/session-store';
import { installShareLink } from '../state/share-link';
import { useRecordings } from '../state/recordings-store';
import { openCompare } from '../state/compare-store';
import { keyId } from '../state/view-key';
import { ComparePanel } from './ComparePanel';
import { CopyLinkButton } from './CopyLinkButton';
import { WORKLOADS } from '../trace/stream/workloads';
import { InsertedCallsPanel } from './InsertedCallsPanel';
import { ConfigPanel } from './ConfigPanel';
import { DeviceBar } from './DeviceBar';
import { EventList } from './EventList';
import { ExportMenu } from './ExportMenu';
import { RecordingsPanel } from './RecordingsPanel';
import { StackPanel } from './StackPanel';
import { StatsPanel } from './StatsPanel';
import { StressPanel } from './StressPanel';
import { ThemeToggle } from './ThemeToggle';
import { SweepExplorer } from './SweepExplorer';
import { TuningGuide } from './TuningGuide';
import { ViewPanels } from './ViewPanels';
import { FileButton } from './FileButton';
import { LinkFilePrompt } from './LinkFilePrompt';
import { OomBox } from './OomBox';
import { PeakStory } from './PeakStory';
import { PredictionChart } from './PredictionChart';
import { PredictDialog } from './PredictDialog';
import { RecordYours } from './RecordYours';
import { BatchResults, readBatchRows } from './BatchResults';
import type { BatchRow } from '../trace/batch/batch-rows';
import { useDelayed } from './use-delayed';

const SAMPLE = 'sample';

let started = false;
/** Once per page (StrictMode runs effects twice in development): what the link says, or the
 * built-in workload playing (GPU stress with it). */
function startOnce(): void {
  if (started) return;
  started = true;
  installShareLink();
}

export function App() {
  const { summary, error, progress, chooseFile, openSample, openWorkload, dismissError, setDevice } = useSession(
    // Only what this panel shows: the store changes often (busy, cursor) and other panels need not redraw.
    useShallow((s) => ({ summary: s.summary, error: s.error, progress: s.progress, chooseFile: s.chooseFile, openSample: s.openSample, openWorkload: s.openWorkload, dismissError: s.dismissError, setDevice: s.setDevice })),
  );
  const comparing = useSession((s) => s.compare !== null);
  const awaiting = useSession((s) => s.awaiting);
  const notesKey = useSession((s) => (s.summary ? keyId(s.summary.key) : ''));
  const viewKey = useViewKey();
  const notesDim = useDelayed(notesKey !== '' && notesKey !== keyId(viewKey));
  const sourceId = useId();
  const deviceId = useId();
  const [dragging, setDragging] = useState(false);
  const [predictFiles, setPredictFiles] = useState<File[] | null>(null);
  const [batch, setBatch] = useState<{ rows: BatchRow[]; snapshots: File[] } | null>(null);
  const [batchError, setBatchError] = useState<string | null>(null);
  useEffect(startOnce, []);
  const sourceValue = summary?.sourceKind === 'workload' ? (WORKLOADS.find((w) => summary.source.startsWith(w.name))?.id ?? '') : summary?.source === SAMPLE_NAME ? SAMPLE : 'file';

  return (
    <div
      className={`app${dragging ? ' dragging' : ''}`}
      onDragOver={(e) => {
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        // One file opens; several are a job's ranks, set side by side.
        const files = [...e.dataTransfer.files];
        if (files.length === 1) void chooseFile(files[0]!);
        else if (files.length > 1) {
          useSession.getState().setPanelOpen('recordings', true);
          void useRecordings.getState().openRanks(files);
        }
      }}
    >
      <header className="top">
        <h1>splitscope</h1>
        <label htmlFor={sourceId}>source</label>
        <select
          id={sourceId}
          value={sourceValue}
          onChange={(e) => {
            const v = e.target.value;
            if (v === SAMPLE) void openSample();
            else if (v !== 'file') openWorkload(v);
          }}
        >
          <optgroup label="Built-in workloads">
            {WORKLOADS.map((w) => (
              <option key={w.id} value={w.id}>
                {w.name}
              </option>
            ))}
          </optgroup>
          <optgroup label="Recorded with PyTorch">
            <option value={SAMPLE}>{SAMPLE_NAME}</option>
            {sourceValue === 'file' && <option value="file">{summary?.source}</option>}
          </optgroup>
        </select>
        {summary && summary.devices.length > 1 && (
          <>
            <label htmlFor={deviceId} title="The snapshot holds several GPUs; PYTORCH_CUDA_ALLOC_CONF applies to each of them alike">
              device
            </label>
            <select id={deviceId} value={summary.device} onChange={(e) => setDevice(Number(e.target.value))}>
              {summary.devices.map((d) => (
                <option key={d} value={d}>
                  cuda:{d}
                </option>
              ))}
            </select>
          </>
        )}
        <FileButton label="Open snapshot…" onFiles={([file]) => void chooseFile(file!)} />
        <FileButton
          label="Fleet results…"
          multiple
          also=".jsonl"
          onFiles={(files) => {
            // splitscope batch's results (.jsonl), and the snapshots a row may open, chosen together.
            const results = files.filter((f) => /\.jsonl$/i.test(f.name));
            readBatchRows(results).then(
              (rows) => {
                setBatchError(null);
                setBatch(results.length === 0 ? null : { rows, snapshots: files.filter((f) => !/\.jsonl$/i.test(f.name)) });
                if (results.length === 0) setBatchError('Choose the results of splitscope batch (a .jsonl file), and the snapshots to open from it if you like.');
              },
              (e: Error) => setBatchError(e.message),
            );
          }}
        />
        <RecordYours />
        <span className="spacer" />
        <CopyLinkButton />
        <ThemeToggle />
        {/* Over the header's bottom edge, out of the flow: a bar that pushed the page down would
            resize the map and the timeline, whose redraws (hundreds of ms on a software GPU) would
            then compete with the parse. */}
        {progress !== null && <progress className="import" value={progress} max={1} aria-label="Reading the snapshot" />}
      </header>
      {error && (
        <p role="alert" className="error banner">
          {error}{' '}
          <button className="link" onClick={dismissError} aria-label="Dismiss the message">
            dismiss
          </button>
        </p>
      )}
      {awaiting && (
        <div className="awaiting" role="alert">
          {awaiting.prediction ? (
            <>
              <p>
                This link shows <b>{awaiting.name}</b>. Choose those recordings to see it (they never leave this machine); nothing else is shown meanwhile.
              </p>
              <FileButton label="Predict another size…" multiple onFiles={(files) => setPredictFiles(files)} />
            </>
          ) : (
            <LinkFilePrompt awaiting={awaiting} />
          )}
        </div>
      )}
      <div className="layout">
        <aside className="side">
          <ConfigPanel />
          <DeviceBar />
          <StatsPanel />
        </aside>
        <main className="main">
          {predictFiles && <PredictDialog files={predictFiles} onClose={() => setPredictFiles(null)} />}
          {batchError && <p role="alert" className="error">{batchError}</p>}
          {batch && <BatchResults rows={batch.rows} snapshots={batch.snapshots} onClose={() => setBatch(null)} />}
          {summary && (
            <p className="source-line">
              <strong>{summary.source}</strong>
              {summary.devices.length > 1 && ` · cuda:${summary.device} of ${summary.devices.length} devices`} · {summary.requests.toLocaleString()} requests ·{' '}
              {/* The file's own entries: the replay's own events change with the config on screen. */}
              {summary.sourceKind === 'snapshot' ? `${summary.recordedEvents.toLocaleString()} trace events` : `${summary.events.toLocaleString()} allocator events`}
            </p>
          )}
          {summary && (
            <div className="main-actions">
              <ExportMenu />
              {!comparing && (
                <button onClick={() => openCompare()} title="Replay this source under several configs, side by side">
                  Compare configs…
                </button>
              )}
              <FileButton label="Predict another size…" multiple onFiles={(files) => setPredictFiles(files)} />
            </div>
          )}
          {summary && <OomBox />}
          {summary && <PeakStory />}
          {summary?.prediction && <PredictionChart facts={summary.prediction} cap={summary.capacity?.kind === 'fraction' ? summary.capacity.bytes : null} />}
          {comparing ? <ComparePanel /> : <ViewPanels />}
          {summary && <StackPanel />}
          {summary && <EventList />}
          {summary && <RecordingsPanel />}
          <InsertedCallsPanel />
          {summary && <TuningGuide />}
          {summary && <SweepExplorer />}
          <StressPanel />
          {summary && (
            <div className={`notes${notesDim ? ' updating' : ''}`} data-key={notesKey} aria-busy={notesKey !== keyId(viewKey)}>
              {summary.notes.map((n) => (
                <p key={n} className="note">
                  {n}
                </p>
              ))}
            </div>
          )}
        </main>
      </div>
    </div>
  );
}
