// The access log: one JSON line per answered request, at info. The line is exactly what
// `logger.info({ reqId, method, url, status, ms }, 'request')` writes, but built as one string
// from the logger's own pieces (level, time, bindings, message key, line end): pino's generic
// serialiser walks and escapes each field, about a third of the cost of a line, and
// this line is written for every request of both tiers.
import { pino, symbols, type Logger } from 'pino'

export interface AccessLine {
  reqId: string
  method: string
  url: string
  status: number
  /** Milliseconds the request took, written rounded to hundredths. */
  ms: number
}

export type AccessLog = (line: AccessLine) => void

/** `ms` rounded to hundredths, as a number: how the line gives a request's time. */
export function roundedMs (ms: number): number {
  return Math.round(ms * 100) / 100
}

/**
 * `roundedMs(ms)` as JavaScript writes it, from integers: writing a fraction is V8's shortest
 * round trip of a double, several times the cost of the two integers.
 */
export function hundredths (ms: number): string {
  const all = Math.round(ms * 100)
  const whole = Math.trunc(all / 100)
  const fraction = all - whole * 100
  if (fraction === 0) return `${whole}`
  if (fraction % 10 === 0) return `${whole}.${fraction / 10}`
  return fraction < 10 ? `${whole}.0${fraction}` : `${whole}.${fraction}`
}

/** `,"time":<epoch ms>` as pino writes it, made into text only when the millisecond changed. */
function epochTimeOncePerMs (): () => string {
  let last = -1
  let text = ''
  return () => {
    const now = Date.now()
    if (now !== last) {
      last = now
      text = `,"time":${now}`
    }
    return text
  }
}

/**
 * A log destination that may hold access lines back to write many at once (src/cli.ts): pino
 * writes its own lines with `write`, the access log with `writeBuffered` when there is one.
 */
export interface LogOutput {
  write: (line: string) => void
  writeBuffered?: (line: string) => void
  flushSync?: () => void
}

const MESSAGE = 'request'
/** What `reqId` and `method` always are (src/http/answer-headers.ts; Node's method tokens): nothing to escape. */
const PLAIN = /^[\w.-]*$/

type LoggerInternals = Logger & {
  [symbols.lsCacheSym]: Record<number, string>
  [symbols.timeSym]: () => string
  [symbols.chindingsSym]: string
  [symbols.endSym]: string
  [symbols.messageKeySym]: string
  [symbols.streamSym]: LogOutput
  [symbols.mixinSym]: unknown
  [symbols.formattersSym]: { log?: unknown }
  [symbols.hooksSym]: { logMethod?: unknown, streamWrite?: unknown }
  [symbols.nestedKeySym]: unknown
}

/**
 * The access log of `logger` at `level` (info; debug for the operational routes), or undefined
 * when that level is off. Falls back to the logger itself when it is configured in a way the
 * built line would not honour (a mixin, log formatters, hooks or a nested key).
 */
export function createAccessLog (logger: Logger, level: 'info' | 'debug'): AccessLog | undefined {
  if (!logger.isLevelEnabled(level)) return undefined
  const internals = logger as LoggerInternals
  const hooks = internals[symbols.hooksSym]
  if (internals[symbols.mixinSym] !== undefined || internals[symbols.formattersSym].log !== undefined ||
    hooks.logMethod !== undefined || hooks.streamWrite !== undefined || internals[symbols.nestedKeySym] != null) {
    return ({ reqId, method, url, status, ms }) => logger[level]({ reqId, method, url, status, ms: roundedMs(ms) }, MESSAGE)
  }
  const head = internals[symbols.lsCacheSym][logger.levels.values[level] as number] as string
  const time = internals[symbols.timeSym]
  // pino's default time is the epoch in ms: made into text once per millisecond, not once per line.
  const timeNow = time === pino.stdTimeFunctions.epochTime ? epochTimeOncePerMs() : time
  const bindings = internals[symbols.chindingsSym]
  const tail = `,"${internals[symbols.messageKeySym]}":"${MESSAGE}"${internals[symbols.endSym]}`
  const stream = internals[symbols.streamSym]
  const write = stream.writeBuffered ?? ((line: string) => stream.write(line))
  return ({ reqId, method, url, status, ms }) => {
    const id = PLAIN.test(reqId) ? `"${reqId}"` : JSON.stringify(reqId)
    const verb = method === 'GET' ? '"GET"' : PLAIN.test(method) ? `"${method}"` : JSON.stringify(method)
    write(`${head}${timeNow()}${bindings},"reqId":${id},"method":${verb},"url":${JSON.stringify(url)},"status":${status},"ms":${hundredths(ms)}${tail}`)
  }
}
