/**
 * The adapter against a real SDK client talking HTTP to a local server that speaks the
 * Messages API: what goes over the wire is what Anthropic's API would receive.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { anthropicComplete, type MessagesClient } from '../../src/notes/anthropic.js';
import type { CompleteFn } from '../../src/notes/port.js';
import { selectSessionFacts } from '../../src/notes/ledger.js';
import { createNotableFactsTracker } from '../../src/notes/tracker.js';

interface Received {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown>;
}

const received: Received[] = [];
/** What the server answers next: a status and a JSON body, or no answer at all. */
let reply: { readonly status: number; readonly body: unknown } | 'hang' = { status: 200, body: {} };
const open = new Set<ServerResponse>();

const message = (text: string) => ({
  id: 'msg_test_01',
  type: 'message',
  role: 'assistant',
  model: 'claude-haiku-test',
  content: [{ type: 'text', text, citations: null }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 120, output_tokens: 30 },
});

const server = createServer((request, response) => {
  let data = '';
  request.on('data', (chunk: Buffer) => {
    data += chunk.toString('utf8');
  });
  request.on('end', () => {
    received.push({
      path: request.url ?? '',
      headers: request.headers,
      body: JSON.parse(data) as Record<string, unknown>,
    });
    if (reply === 'hang') {
      open.add(response);
      return;
    }
    response.writeHead(reply.status, { 'content-type': 'application/json', 'request-id': 'req_test' });
    response.end(JSON.stringify(reply.body));
  });
});

let client: Anthropic;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  client = new Anthropic({ apiKey: 'test', baseURL: `http://127.0.0.1:${port}` });
});

afterAll(async () => {
  for (const response of open) response.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('anthropicComplete', () => {
  it('takes an SDK client as it is, through a structural type, and returns the model port', () => {
    expectTypeOf<Anthropic>().toExtend<MessagesClient>();
    expectTypeOf(anthropicComplete).returns.toEqualTypeOf<CompleteFn>();
  });

  it('sends the prompt as one user turn to POST /v1/messages and returns the text of the answer', async () => {
    reply = { status: 200, body: message('{"notableFacts": [{"category": "People", "fact": "Partner is Jordan"}]}') };
    const complete = anthropicComplete(client, { model: 'claude-haiku-test', system: 'You keep notes.' });
    const text = await complete('the extraction prompt', { signal: new AbortController().signal });
    expect(text).toBe('{"notableFacts": [{"category": "People", "fact": "Partner is Jordan"}]}');
    const request = received.at(-1)!;
    expect(request.path).toBe('/v1/messages');
    expect(request.headers['anthropic-version']).toBeTypeOf('string');
    expect(`${request.headers['x-api-key'] ?? ''} ${request.headers['authorization'] ?? ''}`).toContain('test');
    expect(request.body).toEqual({
      model: 'claude-haiku-test',
      max_tokens: 4096,
      messages: [{ role: 'user', content: 'the extraction prompt' }],
      system: 'You keep notes.',
    });
  });

  it('asks for the default budget when maxTokens is no whole number of tokens (NaN from an unset variable, Infinity, 0, -1)', async () => {
    reply = { status: 200, body: message('{"notableFacts": []}') };
    for (const maxTokens of [Number(undefined), Number.POSITIVE_INFINITY, 0, -1]) {
      const complete = anthropicComplete(client, { model: 'claude-haiku-test', maxTokens });
      expect(await complete('the extraction prompt', { signal: new AbortController().signal })).toBe(
        '{"notableFacts": []}',
      );
      expect(received.at(-1)!.body['max_tokens']).toBe(4096);
    }
    // A fraction is rounded down to the whole tokens it allows.
    await anthropicComplete(client, { model: 'claude-haiku-test', maxTokens: 300.7 })('the extraction prompt', {
      signal: new AbortController().signal,
    });
    expect(received.at(-1)!.body['max_tokens']).toBe(300);
  });

  it('feeds the tracker end to end', async () => {
    reply = {
      status: 200,
      body: message('```json\n{"notableFacts": [{"category": "Logistics", "fact": "Jordan works nights"}]}\n```'),
    };
    const tracker = createNotableFactsTracker({
      complete: anthropicComplete(client, { model: 'claude-haiku-test', maxTokens: 256 }),
    });
    tracker.recordUserMessage('maya', 's1', 'Jordan works nights at the hospital.');
    await tracker.settled();
    expect(selectSessionFacts(tracker.getSnapshot(), 'maya', 's1')).toEqual([
      { category: 'Logistics', fact: 'Jordan works nights' },
    ]);
    expect(received.at(-1)!.body['max_tokens']).toBe(256);
  });

  it('rejects on an HTTP error, which the tracker records as a failed extraction', async () => {
    reply = {
      status: 400,
      body: { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: too large' } },
    };
    const complete = anthropicComplete(client, { model: 'claude-haiku-test' });
    await expect(complete('prompt', { signal: new AbortController().signal })).rejects.toThrow(/400/u);
    const tracker = createNotableFactsTracker({ complete });
    tracker.recordUserMessage('maya', 's1', 'hello');
    await tracker.settled();
    const [event] = tracker.events();
    expect(event?.type === 'notes/extractionFailed' && event.code).toBe('model_error');
    expect(event?.type === 'notes/extractionFailed' && event.message).toContain('max_tokens: too large');
  });

  it('rejects an answer without text', async () => {
    reply = { status: 200, body: { ...message(''), content: [], stop_reason: 'refusal' } };
    const complete = anthropicComplete(client, { model: 'claude-haiku-test' });
    await expect(complete('prompt', { signal: new AbortController().signal })).rejects.toThrow(
      'the model answered without text (stop_reason: refusal)',
    );
  });

  it('rejects an answer of invisible characters only, as one without text', async () => {
    reply = { status: 200, body: { ...message('\u200b\u2060 '), stop_reason: 'end_turn' } };
    const complete = anthropicComplete(client, { model: 'claude-haiku-test' });
    await expect(complete('prompt', { signal: new AbortController().signal })).rejects.toThrow(
      'the model answered without text (stop_reason: end_turn)',
    );
  });

  it('rejects an answer that stopped at max_tokens as truncated, however much text it holds', async () => {
    reply = { status: 200, body: { ...message('{"notableFacts": [{"category": "Peo'), stop_reason: 'max_tokens' } };
    const complete = anthropicComplete(client, { model: 'claude-haiku-test', maxTokens: 16 });
    await expect(complete('prompt', { signal: new AbortController().signal })).rejects.toMatchObject({
      code: 'truncated',
      message: 'the answer stopped at the limit of 16 tokens before it was complete',
    });
  });

  it('aborts the HTTP request when the signal fires, as the tracker’s timeout does', async () => {
    reply = 'hang';
    const complete = anthropicComplete(client, { model: 'claude-haiku-test' });
    const controller = new AbortController();
    const pending = complete('prompt', { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toThrow(/abort/iu);
    const tracker = createNotableFactsTracker({ complete, timeoutMs: 30 });
    tracker.recordUserMessage('maya', 's1', 'hello');
    await tracker.settled();
    const [event] = tracker.events();
    expect(event?.type === 'notes/extractionFailed' && event.code).toBe('timeout');
  });
});
