// The search settings every engine shares: checked before any of them is written into SQL.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { checkSearchSettings, columnRole, DEFAULT_SEARCH_SETTINGS } from '../../src/search/compiled-search.js'

test('a language or column that is not a plain name is refused before it reaches SQL', () => {
  assert.equal(checkSearchSettings(DEFAULT_SEARCH_SETTINGS), DEFAULT_SEARCH_SETTINGS)
  assert.doesNotThrow(() => checkSearchSettings({ columns: ['body_text'], language: 'pg_catalog.german' }))
  for (const language of ["english'; DROP TABLE posts; --", 'English', '', 'a.b.c', 'x'.repeat(64)]) {
    assert.throws(() => checkSearchSettings({ columns: ['title'], language }), /is not a configuration name/, language)
  }
  assert.throws(() => checkSearchSettings({ columns: [], language: 'simple' }), /at least one column/)
  assert.throws(() => checkSearchSettings({ columns: ['title', 'title'], language: 'simple' }), /distinct/)
  for (const column of ['ti"tle', '1title', 'title content', '']) {
    assert.throws(() => checkSearchSettings({ columns: [column], language: 'simple' }), /is not a column name/, column)
  }
})

test('title and summary weigh more than any other column', () => {
  assert.deepEqual(['title', 'summary', 'content', 'body', 'excerpt'].map(columnRole), ['title', 'summary', 'body', 'body', 'body'])
})
