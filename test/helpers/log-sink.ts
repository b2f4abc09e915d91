// A pino logger whose lines the test reads back, parsed, instead of printing them.
import { Writable } from 'node:stream'
import { pino, type Level, type Logger } from 'pino'

/** One parsed log line: pino's numeric `level` (40 warn, 50 error), message, serialised error. */
export type LogLine = Record<string, unknown> & {
  level: number
  msg?: string
  err?: { type?: string, code?: string, message?: string, stack?: string }
}

export interface LogSink {
  logger: Logger
  /** Every line logged so far, parsed, in order. */
  lines: LogLine[]
}

export function logSink (level: Level): LogSink {
  const lines: LogSink['lines'] = []
  const logger = pino({ level }, new Writable({
    write (line: Buffer, _encoding, done) {
      lines.push(JSON.parse(line.toString()))
      done()
    }
  }))
  return { logger, lines }
}
