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
  }
} as const satisfies Record<string, Setting>
