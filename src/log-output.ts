// Where the process's log lines go (standard output). Access lines are buffered as nginx buffers
// its access log (`buffer=4k flush=250ms`): written 4 KiB at a time, at most 250 ms after they
// were logged; under load that is one write for about twenty requests instead of one each
// (issue 12). Any other line is written at once, after the access lines before it (the order
// stays), and what is left is written when the process exits, crash included.
import { pino } from 'pino'
import type { LogOutput } from './http/access-log.js'

const BUFFER_BYTES = 4096
const FLUSH_MS = 250

export function createLogOutput (fd: number, { bufferBytes = BUFFER_BYTES, flushMs = FLUSH_MS } = {}): LogOutput & { flushSync: () => void } {
  const out = pino.destination({ dest: fd, sync: true, minLength: bufferBytes, periodicFlush: flushMs })
  process.once('exit', () => out.flushSync())
  return {
    write (line) {
      out.write(line)
      out.flushSync()
    },
    writeBuffered: (line) => out.write(line),
    flushSync: () => out.flushSync()
  }
}
