// docs/configuration.md is generated from the settings table: the committed file must be what
// `npm run docs:config` writes now, and name every setting with its flag and default.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { CONFIGURATION_DOC, configurationDoc } from '../../scripts/configuration-doc.js'
import { flagName, SETTING_NAMES, SETTINGS } from '../../src/settings.js'

test('docs/configuration.md is what `npm run docs:config` generates from the settings table', () => {
  assert.equal(readFileSync(CONFIGURATION_DOC, 'utf8'), configurationDoc(), 'docs/configuration.md is out of date: run `npm run docs:config`')
})

test('the document has one row per setting, with its flag, default and readers', () => {
  const rows = configurationDoc().split('\n').filter((line) => line.startsWith('| `'))
  assert.equal(rows.length, SETTING_NAMES.length)
  SETTING_NAMES.forEach((name, i) => {
    const setting: { default: string | undefined, readBy: readonly string[] } = SETTINGS[name]
    const row = rows[i] ?? ''
    assert.ok(row.startsWith(`| \`${name}\` | \`--${flagName(name)} `), row)
    assert.ok(row.includes(setting.default === undefined ? '| — (' : `| \`${setting.default}\` |`), row)
    assert.ok(row.includes(`| ${setting.readBy.join(', ')} |`), row)
  })
})
