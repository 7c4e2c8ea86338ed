// Reading a request body (bounded: over the limit is a 413, read no further) and writing JSON replies.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from './api-error.ts';
import type { Body } from './request-fields.ts';

/** The request's body as text; past `limit` bytes the request is refused with a 413 and its body not kept. */
export function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      reject(tooLarge(limit));
      return;
    }
    const decoder = new TextDecoder();
    let text = '';
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) text += decoder.decode(chunk, { stream: true });
    });
    req.on('end', () => (size > limit ? reject(tooLarge(limit)) : resolve(text + decoder.decode())));
    req.on('error', reject);
  });
}

function tooLarge(limit: number): ApiError {
  return new ApiError(413, `the request body is larger than this server's limit of ${limit} bytes`, 'invalid_request_error', null, 'request_too_large');
}

/** A JSON object body, or a 400 saying what is wrong with it. */
export function parseJsonObject(text: string): Body {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ApiError(400, `the request body is not valid JSON (${(err as Error).message})`, 'invalid_request_error', null, 'invalid_json');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ApiError(400, 'the request body must be a JSON object', 'invalid_request_error', null, 'invalid_json');
  return value as Body;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

export function sendError(res: ServerResponse, err: ApiError): void {
  if (res.headersSent) {
    // A stream already under way: the error goes as its last event (OpenAI's clients raise it).
    res.end(`data: ${JSON.stringify(err.body())}\n\n`);
    return;
  }
  sendJson(res, err.status, err.body());
}
