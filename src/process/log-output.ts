// Where the process's log lines go (standard output). Access lines are buffered as nginx buffers
// its access log (`buffer=4k flush=250ms`): written at most 4,096 characters at a time, whole
// lines, at most 250 ms after they were logged; under load that is one write for about twenty
// requests instead of one each. A write of at most 4 KiB (PIPE_BUF) goes into a pipe whole, so
// the lines of processes sharing one (a cluster's workers) never mix: 4,096 characters are 4 KiB
// while they are ASCII (a URL with other characters makes a write longer, as does a line longer
// than that alone). Any other line is written at once, after the access lines before
// it (the order stays), and what is left is written when the process exits, crash included. The buffer is ours
// (one string, and its length): sonic-boom's own measures its whole buffer in bytes at each line.
// What is written is encoded once and handed over as bytes: handed a string, sonic-boom measures
// it in bytes, encodes it to write it, then encodes it again to account for what was written.
import { pino } from 'pino'
import type { LogOutput } from '../http/access-log.js'

/** Characters held before they are written (4 KiB of ASCII). */
export const BUFFER_CHARS = 4096
const FLUSH_MS = 250

export function createLogOutput (fd: number, { bufferChars = BUFFER_CHARS, flushMs = FLUSH_MS } = {}): LogOutput & { flushSync: () => void } {
  // In buffer mode sonic-boom takes Buffers, which its types (strings only) do not say.
  const out = pino.destination({ dest: fd, sync: true, contentMode: 'buffer' }) as unknown as { write: (bytes: Buffer) => boolean }
  let held = ''
  const flushSync = (): void => {
    if (held === '') return
    const lines = held
    held = ''
    out.write(Buffer.from(lines))
  }
  setInterval(flushSync, flushMs).unref()
  process.once('exit', flushSync)
  /** What is held goes first when `line` would take it past the buffer's size. */
  const makeRoomFor = (line: string): void => {
    if (held.length + line.length > bufferChars) flushSync()
  }
  return {
    write (line) {
      makeRoomFor(line)
      const lines = held + line
      held = ''
      out.write(Buffer.from(lines))
    },
    writeBuffered (line) {
      makeRoomFor(line)
      held += line
      if (held.length >= bufferChars) flushSync()
    },
    flushSync
  }
}
