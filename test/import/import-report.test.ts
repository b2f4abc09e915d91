import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { test } from 'node:test'
import { ImportReport } from '../../src/import/import-report.js'

class Capture extends Writable {
  text = ''
  constructor (readonly isTTY: boolean, readonly columns = 80) { super() }
  override _write (chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString()
    done()
  }
}

const ERASE = '\r\x1b[2K'

test('on a terminal: a bar redrawn in place, report lines printed above it, erased before the summary', () => {
  const stdout = new Capture(false)
  const stderr = new Capture(true)
  let time = 0
  const report = new ImportReport({ stdout, stderr }, { dryRun: false, clock: () => time })
  time = 1000
  report.progress('checking', 1)
  report.fail('a.md', 'broken')
  time = 2000
  report.progress('writing', 1, 4)
  time = 2050
  report.progress('writing', 2, 4) // within 100 ms of the last redraw: skipped
  report.progress('writing', 4, 4) // the last one: always drawn
  report.written('a', 'a.md', 'inserted')
  report.summary()
  assert.equal(stderr.text, [
    `${ERASE}checking files: 1`,
    `${ERASE}a.md: broken\n${ERASE}checking files: 1`,
    `${ERASE}writing [########----------------------] 25% 1/4`,
    `${ERASE}writing [##############################] 100% 4/4`,
    ERASE
  ].join(''))
  assert.equal(stdout.text, 'imported 1, updated 0, unchanged 0, drafts 0, failed 1\n')
})

test('elsewhere: plain lines, no escape codes', () => {
  const stdout = new Capture(false)
  const stderr = new Capture(false)
  const report = new ImportReport({ stdout, stderr }, { dryRun: true })
  report.progress('checking', 1)
  report.ignore('layout', 'no column', 'a.md')
  report.ignore('layout', 'no column', 'b.md')
  report.ignore('the body', 'no content column', 'a.md')
  report.draft('d.md')
  report.written('a', 'a.md', 'inserted')
  report.written('e', 'e.md', 'inserted')
  report.draft('e.md', { outcome: 'inserted', marks: '`status` "draft"' })
  report.written('b', 'b.md', 'updated')
  report.written('c', 'c.md', 'unchanged')
  report.progress('writing', 3, 3)
  report.summary()
  assert.equal(stderr.text, 'ignored front-matter key "layout" (no column), first in a.md\n' +
    'ignored the Markdown body (no content column), first in a.md\n' +
    'd.md: a draft, would be kept out (the posts table has no `draft` or `status` column)\n' +
    'e.md: a draft, would be imported, marked by `status` "draft"\ncomparing: 3/3 files done\n')
  assert.equal(stdout.text, 'would insert a (a.md)\nwould insert e (e.md)\nwould update b (b.md)\n' +
    'would import 2, would update 1, unchanged 1, drafts 2, failed 0 (dry run: nothing written)\n')
})
