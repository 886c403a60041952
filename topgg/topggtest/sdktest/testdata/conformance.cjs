'use strict';
// Drives the official @top-gg/sdk 3.1.6, as a bot would use it, against the
// standalone fake (topggfake): every v0 call of its Api, and its Webhook
// (listener and middleware, on express) receiving the fake's v0 deliveries.
// Run by sdk_test.go with TOPGG_FAKE_URL, TOPGG_FAKE_TOKEN and
// TOPGG_FAKE_CONTROL set; everything stays on loopback. Prints "ok: N checks"
// and exits 0, or prints the failure and exits 1 (2 on its own timeout).
const assert = require('node:assert/strict');
const http = require('node:http');
const { once } = require('node:events');
const { Agent, Dispatcher, setGlobalDispatcher } = require('undici');
const express = require('express');
const Topgg = require('@top-gg/sdk');

const { TOPGG_FAKE_URL: apiURL, TOPGG_FAKE_TOKEN: token, TOPGG_FAKE_CONTROL: control } = process.env;
const timeout = setTimeout(() => {
  console.error('FAIL: timed out after 30 s');
  process.exit(2);
}, 30_000);
let checks = 0;
const check = (fn, ...args) => { fn(...args); checks++; };

// The SDK always calls https://top.gg/api/...: its requests go to the fake
// instead (same path, the fake's API root is /api too), and any other origin
// is refused, so nothing leaves this machine.
class ToFake extends Dispatcher {
  constructor(origin) {
    super();
    this.origin = origin;
    this.agent = new Agent();
  }

  dispatch(opts, handler) {
    if (String(opts.origin) !== 'https://top.gg') {
      handler.onError(new Error(`refused: a request to ${opts.origin}`));
      return false;
    }
    return this.agent.dispatch({ ...opts, origin: this.origin }, handler);
  }

  close(...args) { return this.agent.close(...args); }

  destroy(...args) { return this.agent.destroy(...args); }
}

// ctl calls the fake's control API (node:http, not undici: the global
// dispatcher above sends only to the fake's API).
function ctl(method, path, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(control + path, { method, timeout: 10_000 }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { data += c; });
      res.on('end', () => {
        if (res.statusCode >= 300) reject(new Error(`${method} ${path}: ${res.statusCode} ${data}`));
        else resolve(data ? JSON.parse(data) : undefined);
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

// until polls cond until it returns a truthy value, and returns it; the
// global timeout bounds the wait.
async function until(cond) {
  for (;;) {
    const v = await cond();
    if (v) {
      checks++;
      return v;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function api(info) {
  const botId = info.project.platform_id;
  const topgg = new Topgg.Api(token);

  check(assert.deepEqual, await topgg.postStats({ serverCount: 28, shardId: 1, shardCount: 2 }),
    { serverCount: 28, shardId: 1, shardCount: 2 });
  check(assert.deepEqual, await topgg.getStats(botId), { serverCount: 28, shardCount: 2, shards: [0, 28] });
  await topgg.postStats({ serverCount: 30 });
  check(assert.deepEqual, await topgg.getStats(botId), { serverCount: 30, shardCount: 2, shards: [0, 28] });

  const bot = await topgg.getBot(botId);
  check(assert.equal, bot.id, botId);
  check(assert.equal, bot.username, info.project.name);
  check(assert.equal, bot.server_count, 30);

  const bots = await topgg.getBots({ limit: 10, fields: ['id', 'username'] });
  check(assert.deepEqual, bots.results, [{ id: botId, username: info.project.name }]);
  check(assert.equal, bots.total, 1);

  const voters = await topgg.getVotes();
  check(assert.deepEqual, voters.map((v) => v.id), ['205680187394752512']);
  check(assert.equal, await topgg.hasVoted('205680187394752512'), true);
  check(assert.equal, await topgg.hasVoted('395526710101278721'), false);
  check(assert.equal, typeof (await topgg.isWeekend()), 'boolean');

  await assert.rejects(topgg.getBot('1'), /^Error: 404 Not Found/);
  checks++;
  await assert.rejects(new Topgg.Api('not-the-token').getVotes(), /^Error: 401 Unauthorized/);
  checks++;
}

async function webhooks(info) {
  const botId = info.project.platform_id;
  const wh = new Topgg.Webhook('v0-auth', { error: () => {} });
  const got = { listener: [], middleware: [] };
  const app = express();
  app.post('/listener', wh.listener((vote) => { got.listener.push(vote); }));
  app.post('/middleware', wh.middleware(), (req) => { got.middleware.push(req.vote); });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${server.address().port}`;
  try {
    await ctl('POST', '/webhooks', { url: `${base}/listener`, authorization: 'v0-auth' });
    await ctl('POST', '/webhooks', { url: `${base}/middleware`, authorization: 'v0-auth' });
    await ctl('POST', '/webhooks', { url: `${base}/listener`, authorization: 'not-the-auth' });

    await ctl('POST', '/votes', { user_id: '900000000000000002', platform_id: '395526710101278721', weight: 2, query: 'ref=abc&n=1' });
    await until(() => got.listener.length === 1 && got.middleware.length === 1);
    const vote = { bot: botId, user: '395526710101278721', type: 'upvote', isWeekend: true, query: { ref: 'abc', n: '1' } };
    check(assert.deepEqual, got.listener[0], vote);
    check(assert.deepEqual, got.middleware[0], vote);

    await ctl('POST', '/webhooks/test');
    await until(() => got.listener.length === 2 && got.middleware.length === 2);
    const test = { bot: botId, user: '160105994217586689', type: 'test', isWeekend: false, query: '' };
    check(assert.deepEqual, got.listener[1], test);
    check(assert.deepEqual, got.middleware[1], test);

    // Every delivery answered: 204 where the auth is right, 403 (never
    // retried) where it is not.
    const deliveries = await until(async () => {
      const ds = await ctl('GET', '/deliveries');
      return ds.length === 6 && ds.every((d) => d.done) && ds;
    });
    for (const d of deliveries) {
      check(assert.equal, d.version, 0);
      check(assert.deepEqual, d.attempts.map((a) => a.status), [d.delivered ? 204 : 403]);
    }
    check(assert.equal, deliveries.filter((d) => !d.delivered).length, 2);
  } finally {
    server.close();
  }
}

async function main() {
  assert.ok(apiURL && token && control, 'TOPGG_FAKE_URL, TOPGG_FAKE_TOKEN and TOPGG_FAKE_CONTROL must be set');
  setGlobalDispatcher(new ToFake(new URL(apiURL).origin));
  const info = await ctl('GET', '');
  await api(info);
  await webhooks(info);
  console.log(`ok: ${checks} checks`);
}

main().then(() => {
  clearTimeout(timeout);
  process.exit(0);
}, (err) => {
  console.error('FAIL:', err && err.stack ? err.stack : err);
  process.exit(1);
});
