// The access log and the process's log output: an access line is the very line pino
// would write; access lines are held back to be written many at once, but never after a later
// line, nor longer than the flush interval, nor lost at exit.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs, { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Writable } from 'node:stream'
import { after, test } from 'node:test'
import { pino } from 'pino'
import fc from 'fast-check'
import { createAccessLog, hundredths, roundedMs } from '../../src/http/access-log.js'
import { BUFFER_CHARS, createLogOutput } from '../../src/process/log-output.js'
import { pollUntil } from '../helpers/poll.js'

const dir = mkdtempSync(join(tmpdir(), 'blog-read-api-log-'))
after(() => rmSync(dir, { recursive: true, force: true }))

function capture (options: pino.LoggerOptions = {}): { logger: pino.Logger, lines: string[] } {
  const lines: string[] = []
  const sink = new Writable({ write (chunk: Buffer, _encoding, done) { lines.push(chunk.toString()); done() } })
  // pino writes to a plain Writable synchronously: each line is there once the call returns.
  const logger = pino({ name: 'blog-read-api', timestamp: () => ',"time":1', ...options }, sink as unknown as pino.DestinationStream).child({ tier: 'front' })
  return { logger, lines }
}

const line = { reqId: 'req-1', method: 'GET', url: '/api/blog/a?fields=slug,"title"\\', status: 200, ms: 0.42 }

test('an access line is byte for byte what pino writes for the same fields', () => {
  const { logger, lines } = capture()
  const access = createAccessLog(logger, 'info')
  assert.ok(access !== undefined)
  access(line)
  logger.info(line, 'request')
  assert.equal(lines.length, 2)
  assert.equal(lines[0], lines[1])
  assert.deepEqual(JSON.parse(lines[0] ?? ''), { level: 30, time: 1, pid: process.pid, hostname: JSON.parse(lines[1] ?? '').hostname, name: 'blog-read-api', tier: 'front', ...line, msg: 'request' })
  // A request id of the client's or a method Node parses could in principle need escaping too.
  access({ ...line, reqId: 'a"b', method: 'M\\' })
  logger.info({ ...line, reqId: 'a"b', method: 'M\\' }, 'request')
  assert.equal(lines[2], lines[3])
})

test('no access log below its level; a logger configured in ways the line would not honour logs it itself', () => {
  assert.equal(createAccessLog(capture({ level: 'warn' }).logger, 'info'), undefined)
  assert.equal(createAccessLog(capture({ level: 'info' }).logger, 'debug'), undefined)
  const { logger, lines } = capture({ mixin: () => ({ extra: true }) })
  createAccessLog(logger, 'info')?.(line)
  assert.equal(JSON.parse(lines[0] ?? '').extra, true)
})

test('access lines wait for 4 KiB, the flush interval or any other line, which follows them; nothing is lost at exit', async () => {
  const file = join(dir, 'out.log')
  const fd = openSync(file, 'w')
  const out = createLogOutput(fd, { flushMs: 200 })
  const written = (): string => readFileSync(file, 'utf8')
  out.writeBuffered?.('access 1\n')
  out.writeBuffered?.('access 2\n')
  assert.equal(written(), '', 'held back')
  out.write('started\n')
  assert.equal(written(), 'access 1\naccess 2\nstarted\n', 'another line is written at once, after the access lines before it')
  out.writeBuffered?.('access 3\n')
  await pollUntil('the flush interval', () => written().endsWith('access 3\n'), { withinMs: 2000 })
  const before = 'access 1\naccess 2\nstarted\naccess 3\n'.length
  out.writeBuffered?.('x'.repeat(BUFFER_CHARS - 3) + '\n')
  assert.equal(written().length, before, 'less than 4 KiB: held')
  out.writeBuffered?.('y\n')
  assert.equal(written().length, before + BUFFER_CHARS - 2 + 2, 'exactly 4 KiB: written at once')
  out.writeBuffered?.('z'.repeat(BUFFER_CHARS - 2) + '\n')
  out.writeBuffered?.('w\n')
  assert.equal(written().length, before + BUFFER_CHARS + BUFFER_CHARS - 1, 'a line that would take it past 4 KiB: what is held goes first')
  out.flushSync()
  assert.ok(written().endsWith('\nw\n'))
  closeSync(fd)

  // A process that exits (here with an uncaught error) writes what it held.
  const exitFile = join(dir, 'exit.log')
  const crashed = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e',
    `import { openSync } from 'node:fs'; import { createLogOutput } from ${JSON.stringify(new URL('../../src/process/log-output.ts', import.meta.url).href)};
     const out = createLogOutput(openSync(${JSON.stringify(exitFile)}, 'w')); out.writeBuffered('held\\n'); setTimeout(() => { throw new Error('crash') }, 10)`],
  { stdio: 'ignore', cwd: fileURLToPath(new URL('../..', import.meta.url)) })
  assert.equal(crashed.status, 1)
  assert.equal(readFileSync(exitFile, 'utf8'), 'held\n')
})

test('every write is whole lines, at most 4 KiB unless one line alone is longer, and together they are every line in order', (t) => {
  const writes: string[] = []
  t.mock.method(fs, 'writeSync', (_fd: number, bytes: Buffer) => {
    writes.push(bytes.toString())
    return bytes.length
  })
  const fd = openSync(join(dir, 'writes.log'), 'w')
  t.after(() => closeSync(fd))
  const out = createLogOutput(fd, { flushMs: 60_000 })
  const call = fc.record({
    buffered: fc.boolean(),
    line: fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 2 * BUFFER_CHARS })).map((n) => `${'a'.repeat(n)}\n`)
  })
  fc.assert(fc.property(fc.array(call, { maxLength: 60 }), (calls) => {
    writes.length = 0
    for (const { buffered, line } of calls) {
      if (buffered) out.writeBuffered?.(line)
      else out.write(line)
    }
    out.flushSync()
    assert.equal(writes.join(''), calls.map(({ line }) => line).join(''))
    for (const bytes of writes) {
      assert.ok(bytes.endsWith('\n'), 'whole lines')
      assert.ok(bytes.length <= BUFFER_CHARS || bytes.indexOf('\n') === bytes.length - 1, `a write of ${bytes.length} bytes holds more than one line`)
    }
  }))
})

test('lines of any characters are written as UTF-8, whole and in order', () => {
  const file = join(dir, 'characters.log')
  const fd = openSync(file, 'w')
  const out = createLogOutput(fd, { flushMs: 60_000 })
  const lines = ['a café, 投稿 and 🐘\n', `${'é'.repeat(BUFFER_CHARS)}\n`, 'then 🐘\n']
  for (const line of lines) out.writeBuffered?.(line)
  out.write('other: ü\n')
  out.writeBuffered?.('last ß\n')
  out.flushSync()
  closeSync(fd)
  assert.equal(readFileSync(file, 'utf8'), [...lines, 'other: ü\n', 'last ß\n'].join(''))
})

test('the time of a request is written as JavaScript writes it rounded to hundredths of a millisecond', () => {
  fc.assert(fc.property(fc.double({ min: 0, max: 1e7, noNaN: true }), (ms) => {
    assert.equal(hundredths(ms), String(roundedMs(ms)))
  }))
  for (const ms of [0, 0.004, 0.005, 0.05, 0.1, 0.42, 1, 1.5, 12.34, 99.999, 100]) assert.equal(hundredths(ms), String(roundedMs(ms)), String(ms))
})

test('with pino\'s own time, each line carries the time it was written, as pino writes it', (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: 1_700_000_000_123 })
  const lines: string[] = []
  const sink = new Writable({ write (chunk: Buffer, _encoding, done) { lines.push(chunk.toString()); done() } })
  const logger = pino({ name: 'blog-read-api' }, sink as unknown as pino.DestinationStream)
  const access = createAccessLog(logger, 'info')
  assert.ok(access !== undefined)
  access(line)
  logger.info({ ...line, ms: roundedMs(line.ms) }, 'request')
  t.mock.timers.tick(1)
  access(line)
  logger.info({ ...line, ms: roundedMs(line.ms) }, 'request')
  assert.equal(lines.length, 4)
  assert.equal(lines[0], lines[1])
  assert.equal(lines[2], lines[3])
  assert.equal(JSON.parse(lines[2] ?? '').time, 1_700_000_000_124)
})
