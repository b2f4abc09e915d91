// A pino logger whose lines the test reads back, parsed, instead of printing them.
import { Writable } from 'node:stream'
import { pino, type Level, type Logger } from 'pino'

export interface LogSink {
  logger: Logger
  /** Every line logged so far, parsed, in order. */
  lines: Array<Record<string, unknown> & { msg?: string, err?: { code?: string } }>
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
