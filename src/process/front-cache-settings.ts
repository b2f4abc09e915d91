// The settings of what the front holds of upstream answers: a part of the one settings table
// (src/settings.ts), in the same form.
import { FRONT, type Setting } from './setting-shape.js'
import { megabytes } from './setting-values.js'

export const FRONT_CACHE_SETTINGS = {
  CACHE_MAX_MB: {
    value: 'MB',
    default: '64',
    help: 'front: memory for its copies of upstream bodies (confirmed on every request) and its page indexes (0: none)',
    doc: 'Front: memory for its copies of upstream bodies (confirmed on every request, by posts version or `If-None-Match`, never served unchecked) and for the page indexes of list shapes clients page through often, evicted alike. `0` disables them.',
    schema: megabytes,
    readBy: FRONT
  },
  CACHE_DISK_MAX_MB: {
    value: 'MB',
    default: '1024',
    help: 'front: disk for its copies of lists too large for memory (over 8 MiB), in the system\'s temporary directory (0: none)',
    doc: 'Front: disk for its copies of lists too large for memory (over 8 MiB, which it relays as they come): each is written to a file as it is relayed, in a directory of the process\'s own under the system\'s temporary directory (`TMPDIR`), removed when the front stops, and served from it while the posts version it was read under is current (confirmed on every request, as the copies in memory are), the least recently used removed first. `0` disables them.',
    schema: megabytes,
    readBy: FRONT
  }
} as const satisfies Record<string, Setting>
