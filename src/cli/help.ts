// The help texts of `blog-read-api`: the commands at a glance (`--help`), and each command's own
// (`help COMMAND`, `COMMAND --help`): its arguments, the settings it reads, its exit codes.
import { COMMAND_NAMES, flagName, SETTINGS, settingsReadBy, type CommandName } from '../settings.js'
import { COMMANDS } from './commands.js'

const HELP_COMMAND = 'this text, or a command\'s: its arguments, the settings it reads, its exit codes'

export function generalHelp (): string {
  const width = Math.max(...COMMAND_NAMES.map((name) => name.length), 'help'.length) + 2
  return [
    'Usage: blog-read-api [COMMAND] [--flag value ...]',
    '',
    'Blog posts as JSON from a relational table, through a public front API and an upstream post API.',
    '',
    'Commands:',
    ...COMMAND_NAMES.map((name) => `  ${name.padEnd(width)}${COMMANDS[name].summary}`),
    `  ${'help'.padEnd(width)}${HELP_COMMAND}`,
    '',
    'Options:',
    '  -h, --help   this text; after a command, that command\'s help',
    '  --version    the version',
    '',
    'Each setting is an environment variable and a flag of the same meaning (BLOG_PORT and',
    '--blog-port; the flag wins). `blog-read-api help COMMAND` lists those the command reads.',
    ''
  ].join('\n')
}

export function commandHelp (command: CommandName): string {
  const info = COMMANDS[command]
  const lines = [
    `Usage: blog-read-api ${command}${info.arguments === undefined ? '' : ` ${info.arguments}`} [--flag value ...]`,
    '',
    `${info.summary[0]?.toUpperCase() ?? ''}${info.summary.slice(1)}.`,
    '',
    ...info.description
  ]
  if (info.argumentHelp !== undefined) {
    const width = Math.max(...info.argumentHelp.map(([name]) => name.length)) + 2
    lines.push('', 'Arguments:', ...info.argumentHelp.map(([name, help]) => `  ${name.padEnd(width)}${help}`))
  }
  lines.push('', 'Settings it reads (the environment variable, or its flag: the flag wins):')
  for (const name of settingsReadBy(command)) {
    const setting: { value: string, default: string | undefined, unset?: string, help: string } = SETTINGS[name]
    const fallback = setting.default !== undefined ? `default ${setting.default}` : `if unset, ${setting.unset ?? 'none'}`
    lines.push(`  --${flagName(name)} ${setting.value}  (${name}; ${fallback})`, `      ${setting.help}`)
  }
  lines.push('', 'Exit codes:', ...info.exitCodes.map(([code, meaning]) => `  ${code}  ${meaning}`), '')
  return lines.join('\n')
}
