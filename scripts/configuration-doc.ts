// `npm run docs:config`: writes docs/configuration.md from the settings table (src/settings.ts),
// so that the document never says other than the code. test/process/configuration-doc.test.ts
// fails when the committed file differs from what this generates.
import { writeFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { flagName, SETTING_NAMES, SETTINGS, type Setting } from '../src/settings.js'

export const CONFIGURATION_DOC = new URL('../docs/configuration.md', import.meta.url)

/** A table cell: pipes escaped, so that they do not end the cell. */
const cell = (text: string): string => text.replaceAll('|', '\\|')

export function configurationDoc (): string {
  const rows = SETTING_NAMES.map((name) => {
    const setting: Setting = SETTINGS[name]
    const fallback = setting.default === undefined ? `— (${setting.unset ?? 'unset'})` : `\`${setting.default}\``
    const meaning = setting.doc ?? `${setting.help[0]?.toUpperCase() ?? ''}${setting.help.slice(1)}.`
    const cells = [`\`${name}\``, `\`--${flagName(name)} ${setting.value}\``, fallback, setting.readBy.join(', '), meaning]
    return `| ${cells.map(cell).join(' | ')} |`
  })
  return [
    '<!-- Generated from src/settings.ts by `npm run docs:config`: change the table there, then run it. -->',
    '# Configuration',
    '',
    'Each setting is an environment variable, and a flag of the same meaning (`BLOG_PORT` ↔',
    '`--blog-port`); the flag wins, and an empty value counts as unset (unless the setting says what',
    'it means). Every value is checked at start-up, whichever command runs: a bad one stops the',
    'process with one line naming the setting, and exit code 2. So does a port given to two',
    'listeners of one process.',
    '`blog-read-api help COMMAND` lists the settings a command reads, with their defaults.',
    '',
    '| Setting | Flag | Default | Read by | Meaning |',
    '|---|---|---|---|---|',
    ...rows,
    ''
  ].join('\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(CONFIGURATION_DOC, configurationDoc())
  console.log(`wrote ${CONFIGURATION_DOC.pathname} (${SETTING_NAMES.length} settings)`)
}
