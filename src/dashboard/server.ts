// The dashboard's HTTP server (node:http, on 127.0.0.1 only): the page (./page/), the charting
// library from node_modules (uPlot: no CDN, the page works offline), and JSON endpoints the page
// polls while runs train:
//   GET /api/runs                      {runs: [{id, row, seed, metrics, sampleSteps}]}
//   GET /api/metrics?run=ID&from=N     {total, reset, lines}: metrics.jsonl's lines from the N-th on
//                                      (reset: the file got shorter, e.g. a resume cut it; lines then
//                                      holds all of it). Non-finite numbers arrive as null.
//   GET /api/samples?run=ID&step=S     {step, episodes}: RUN/samples/step-S.jsonl (docs/dashboard.md)
// A run is named by its id from /api/runs; no path from a request is ever opened.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { MetricsLog, type StepMetrics } from '../runs/metrics-log.ts';
import { SamplesFormatError, type SampleEpisode, readSamplesFile, sampleSteps, stepSamplesFile } from '../runs/samples.ts';
import { type DashboardRun, discoverRuns } from './run-sources.ts';

const pageDir = fileURLToPath(new URL('./page/', import.meta.url));
const require = createRequire(import.meta.url);

/** The files the server sends, by URL path: the page's own and uPlot's. */
const STATIC: Record<string, { file: () => string; type: string }> = {
  '/': { file: () => join(pageDir, 'index.html'), type: 'text/html; charset=utf-8' },
  '/app.js': { file: () => join(pageDir, 'app.js'), type: 'text/javascript; charset=utf-8' },
  '/style.css': { file: () => join(pageDir, 'style.css'), type: 'text/css; charset=utf-8' },
  '/vendor/uPlot.iife.min.js': { file: () => require.resolve('uplot/dist/uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
  '/vendor/uPlot.min.css': { file: () => require.resolve('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' },
};

export interface DashboardOptions {
  /** Run folders, experiment OUT folders or folders of runs (./run-sources.ts). */
  dirs: string[];
  /** 0: any free port. */
  port: number;
  host?: string;
}

export interface Dashboard {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** A file's parsed content, read again only when its size or modification time changes. */
class FileCache<T> {
  private readonly entries = new Map<string, { size: number; mtimeMs: number; value: T }>();
  constructor(private readonly load: (file: string) => Promise<T>) {}

  async get(file: string, missing: T): Promise<T> {
    let s;
    try {
      s = await stat(file);
    } catch {
      return missing;
    }
    const hit = this.entries.get(file);
    if (hit && hit.size === s.size && hit.mtimeMs === s.mtimeMs) return hit.value;
    const value = await this.load(file);
    this.entries.set(file, { size: s.size, mtimeMs: s.mtimeMs, value });
    return value;
  }
}

class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const metrics = new FileCache<StepMetrics[]>((file) => new MetricsLog(file).read());
  const samples = new FileCache<SampleEpisode[]>((file) => readSamplesFile(file));
  const runOf = (id: string | null): DashboardRun => {
    const run = discoverRuns(options.dirs).find((r) => r.id === id);
    if (!run) throw new HttpError(404, `no run '${id}' in this dashboard`);
    return run;
  };
  const wholeNumber = (value: string | null, name: string): number => {
    if (value === null || !/^\d+$/.test(value)) throw new HttpError(400, `${name} must be a whole number ≥ 0, got '${value}'`);
    return Number(value);
  };

  const api = async (url: URL): Promise<unknown> => {
    const q = url.searchParams;
    switch (url.pathname) {
      case '/api/runs':
        return {
          runs: await Promise.all(
            discoverRuns(options.dirs).map(async (r) => ({ id: r.id, row: r.row, seed: r.seed, metrics: (await metrics.get(join(r.dir, 'metrics.jsonl'), [])).length, sampleSteps: await sampleSteps(r.dir) })),
          ),
        };
      case '/api/metrics': {
        const run = runOf(q.get('run'));
        const from = wholeNumber(q.get('from') ?? '0', 'from');
        const lines = await metrics.get(join(run.dir, 'metrics.jsonl'), []);
        const reset = from > lines.length;
        return { total: lines.length, reset, lines: lines.slice(reset ? 0 : from) };
      }
      case '/api/samples': {
        const run = runOf(q.get('run'));
        const step = wholeNumber(q.get('step'), 'step');
        const file = stepSamplesFile(run.dir, step);
        const episodes = await samples.get(file, null as unknown as SampleEpisode[]);
        if (episodes === null) throw new HttpError(404, `${run.id} has no samples for step ${step}`);
        return { step, episodes };
      }
      default:
        throw new HttpError(404, `no endpoint ${url.pathname}`);
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'only GET' });
    if (url.pathname === '/favicon.ico') {
      res.writeHead(204);
      res.end();
      return;
    }
    const asset = STATIC[url.pathname];
    if (asset) {
      const body = await readFile(asset.file());
      res.writeHead(200, { 'content-type': asset.type, 'content-length': body.length, 'cache-control': 'no-cache' });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    if (!url.pathname.startsWith('/api/')) return sendJson(res, 404, { error: `no page ${url.pathname}` });
    try {
      sendJson(res, 200, await api(url));
    } catch (err) {
      if (err instanceof HttpError) return sendJson(res, err.status, { error: err.message });
      // A damaged samples file is the run's problem, not the server's: the page shows the line.
      if (err instanceof SamplesFormatError) return sendJson(res, 422, { error: err.message });
      throw err;
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: err instanceof Error ? err.message : String(err) });
      else res.destroy();
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolvePromise();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/`,
    server,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
