// The OpenAI-compatible HTTP server (node:http) and its routes:
//   GET  /v1/models, /v1/models/{id}   the served models (src/serve/models.ts), with vLLM's max_model_len
//   POST /v1/chat/completions          src/serve/chat-completions.ts (the team model: src/serve/team.ts)
//   POST /v1/completions               src/serve/completions.ts
//   GET  /health                       200 while the server runs
//   GET  /marft/stats                  requests received and engine calls made (the batcher's counters)
// Every failure is answered in OpenAI's error shape (src/serve/api-error.ts) and the server keeps
// serving; an error of the engine itself is a 500 whose one line also goes to stderr.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SamplingEngine } from '../engine/types.ts';
import type { Tokenizer } from '../tokenizer/types.ts';
import { ApiError, invalidParam, unknownModel } from './api-error.ts';
import { SampleBatcher, type BatcherStats } from './batcher.ts';
import { chatCompletions } from './chat-completions.ts';
import { completions } from './completions.ts';
import { parseJsonObject, readBody, sendError, sendJson } from './http-io.ts';
import type { ServedModel } from './models.ts';
import type { Body } from './request-fields.ts';
import type { ServeContext } from './sample-choices.ts';
import type { TeamModel } from './team.ts';

export interface ServeOptions {
  engine: SamplingEngine;
  models: ServedModel[];
  tokenizer: Tokenizer | null;
  /** The team model's workflow (--team), when `models` lists it. */
  team?: TeamModel | null;
  host: string;
  /** 0: any free port (the running server's `port` says which). */
  port: number;
  /** Milliseconds a request waits for others to share its engine call (default 5). */
  batchWindowMs?: number;
  /** Largest request body in bytes (default 16 MiB). */
  bodyLimit?: number;
  /** The first seed the server picks for requests without one (default: random). */
  firstSeed?: number;
  /** Where a 500's line goes (default: stderr). */
  log?: (line: string) => void;
}

export interface RunningServer {
  /** http://HOST:PORT */
  url: string;
  /** The OpenAI API root: http://HOST:PORT/v1 */
  baseUrl: string;
  port: number;
  stats: BatcherStats;
  close(): Promise<void>;
}

type Handler = (ctx: ServeContext, model: ServedModel, body: Body, res: ServerResponse) => Promise<void>;

export async function startServer(o: ServeOptions): Promise<RunningServer> {
  const batcher = new SampleBatcher(o.engine, { windowMs: o.batchWindowMs ?? 5, decode: o.tokenizer ? (ids) => o.tokenizer!.decode(ids) : null, firstSeed: o.firstSeed ?? Math.floor(Math.random() * 2 ** 31) });
  const eosTokenIds = [...new Set([...o.engine.info.eosTokenIds, ...(o.tokenizer?.eosTokenIds ?? [])])];
  let counter = 0;
  const ctx: ServeContext = { batcher, info: o.engine.info, tokenizer: o.tokenizer, eosTokenIds, nextId: (prefix) => `${prefix}-${++counter}` };
  const byId = new Map(o.models.map((m) => [m.id, m]));
  const created = Math.floor(Date.now() / 1000);
  const log = o.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const bodyLimit = o.bodyLimit ?? 16 * 1024 * 1024;

  const modelCard = (m: ServedModel): Record<string, unknown> => ({
    id: m.id, object: 'model', created, owned_by: 'marft', root: m.id, parent: null, max_model_len: o.engine.info.contextLength,
    marft: { kind: m.kind, ...(m.adapter ? { adapter: m.adapter } : {}) },
  });

  const chatHandler: Handler = (c, model, body, res) => {
    if (model.kind === 'team') return o.team!.chat(c, model, body, res);
    return chatCompletions(c, model, body, res);
  };
  const completionsHandler: Handler = (c, model, body, res) => {
    if (model.kind === 'team') throw new ApiError(400, 'the team model answers /v1/chat/completions only (the problem is the last user message)', 'invalid_request_error', 'model', 'unsupported_endpoint');
    return completions(c, model, body, res);
  };

  async function post(req: IncomingMessage, res: ServerResponse, handler: Handler): Promise<void> {
    const body = parseJsonObject(await readBody(req, bodyLimit));
    if (typeof body.model !== 'string' || body.model === '') throw invalidParam('model', 'a model name is required (GET /v1/models lists them)', 'missing_required_parameter');
    const model = byId.get(body.model);
    if (!model) throw unknownModel(body.model, [...byId.keys()]);
    await handler(ctx, model, body, res);
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '') || '/';
    const method = req.method ?? 'GET';
    const only = (allowed: string): void => {
      if (method !== allowed) throw new ApiError(405, `${method} ${path}: only ${allowed} is allowed here`, 'invalid_request_error', null, 'method_not_allowed');
    };
    if (path === '/v1/models') {
      only('GET');
      sendJson(res, 200, { object: 'list', data: o.models.map(modelCard) });
    } else if (path.startsWith('/v1/models/')) {
      only('GET');
      const name = decodeURIComponent(path.slice('/v1/models/'.length));
      const model = byId.get(name);
      if (!model) throw unknownModel(name, [...byId.keys()]);
      sendJson(res, 200, modelCard(model));
    } else if (path === '/v1/chat/completions') {
      only('POST');
      await post(req, res, chatHandler);
    } else if (path === '/v1/completions') {
      only('POST');
      await post(req, res, completionsHandler);
    } else if (path === '/health') {
      sendJson(res, 200, {});
    } else if (path === '/marft/stats') {
      sendJson(res, 200, { ...batcher.stats });
    } else {
      throw new ApiError(404, `${method} ${path}: no such route (this server has /v1/models, /v1/chat/completions, /v1/completions)`, 'invalid_request_error', null, 'not_found');
    }
  }

  const server: Server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      if (err instanceof ApiError) {
        sendError(res, err);
        return;
      }
      const line = ((err as Error)?.message ?? String(err)).split('\n')[0]!;
      log(`marft serve: ${req.method} ${req.url}: ${line}`);
      sendError(res, new ApiError(500, `the engine failed: ${line}`, 'server_error', null, 'engine_error'));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  const url = `http://${host}:${port}`;
  return {
    url, baseUrl: `${url}/v1`, port, stats: batcher.stats,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
