// Server-sent events as OpenAI's streaming endpoints send them: `data: <json>` events, then
// `data: [DONE]`. The engine returns whole samples (SamplingEngine.sample has no token callback), so
// a stream starts once its samples are drawn and carries them one token per event.
import type { ServerResponse } from 'node:http';

export class SseStream {
  constructor(private readonly res: ServerResponse, headers: Record<string, string> = {}) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', ...headers });
  }

  send(event: unknown): void {
    this.res.write(`data: ${JSON.stringify(event)}\n\n`);
  }

  done(): void {
    this.res.end('data: [DONE]\n\n');
  }
}
