// The command line of `blog-read-api`, parsed: a command and its flags (one per setting), or a
// request for help or the version. A mistake is a UsageError, worded for the person typing it,
// with the nearest known flag or command when one is close.
import { parseArgs } from 'node:util'
import type { SettingTexts } from '../config.js'
import { closestNames } from '../lib/closest-names.js'
import { COMMAND_NAMES, flagName, SETTING_NAMES, SETTINGS, type CommandName } from '../settings.js'

/** A mistake of the person starting the process: printed as one line, exit code 2. */
export class UsageError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

export type CommandLine =
  | { action: 'help', command?: CommandName }
  | { action: 'version' }
  | {
    action: 'run'
    command: CommandName
    flags: SettingTexts
    /** `import`: the files and folders, --dry-run and --body-column; `preview-url`: the slug. */
    inputs: string[]
    dryRun: boolean
    /** `migrate --search`: also create the store's search index. */
    search?: true
    bodyColumn?: string
    /** `preview-url` only: how long the link opens the post (`--ttl`). */
    ttl?: string
  }

/** Flags that are not settings. */
const SWITCHES = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  search: { type: 'boolean' }
} as const

/** Import options that take a value and are not settings. */
const IMPORT_OPTIONS = { 'body-column': { type: 'string' } } as const
/** Flags of one command that take a value and are not settings. */
const COMMAND_FLAGS = { ttl: 'preview-url' } as const

const SETTING_BY_FLAG = new Map(SETTING_NAMES.map((name) => [flagName(name), name]))
const KNOWN_FLAGS = [...Object.keys(SWITCHES), ...Object.keys(IMPORT_OPTIONS), ...Object.keys(COMMAND_FLAGS), ...SETTING_BY_FLAG.keys()]

/** "a, b or c". */
export function listOf (words: readonly string[]): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words.at(-1) ?? ''}`
}

function unknownFlag (rawName: string): UsageError {
  const name = rawName.replace(/^-+/, '')
  const near = closestNames(name, KNOWN_FLAGS)
  const hint = near.length > 0 && near.length <= 4 ? `did you mean ${listOf(near.map((flag) => `--${flag}`))}?` : 'see blog-read-api --help'
  return new UsageError(`unknown flag ${rawName} (${hint})`)
}

function checkCommand (name: string): CommandName {
  if ((COMMAND_NAMES as readonly string[]).includes(name)) return name as CommandName
  const near = closestNames(name, [...COMMAND_NAMES, 'help'])
  const hint = near.length > 0 ? `did you mean ${listOf(near)}?` : `the commands: ${listOf([...COMMAND_NAMES, 'help'])}`
  throw new UsageError(`unknown command "${name}" (${hint})`)
}

export function parseCommandLine (argv: readonly string[]): CommandLine {
  // Not strict: unknown flags are found below, so that each gets its "did you mean".
  const options = { ...SWITCHES, ...IMPORT_OPTIONS, ttl: { type: 'string' as const }, ...Object.fromEntries([...SETTING_BY_FLAG.keys()].map((flag) => [flag, { type: 'string' as const }])) }
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true })
  const flags: SettingTexts = {}
  const switches = new Set<string>()
  let bodyColumn: string | undefined
  let ttl: string | undefined
  const positionals: string[] = []
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value)
    if (token.kind !== 'option') continue
    const setting = SETTING_BY_FLAG.get(token.name)
    if (setting !== undefined) {
      // A flag right after it is not its value: its value is missing.
      if (token.value === undefined || (!token.inlineValue && token.value.startsWith('--'))) {
        throw new UsageError(`${token.rawName} needs a value (${token.rawName} ${SETTINGS[setting].value}, or ${setting} in the environment)`)
      }
      flags[setting] = token.value
    } else if (token.name === 'body-column') {
      if (token.value === undefined || (!token.inlineValue && token.value.startsWith('--')) || token.value.trim() === '') {
        throw new UsageError(`${token.rawName} needs a value (${token.rawName} NAME: the column the Markdown body fills)`)
      }
      bodyColumn = token.value
    } else if (token.name === 'ttl') {
      if (token.value === undefined || (!token.inlineValue && token.value.startsWith('--'))) throw new UsageError(`${token.rawName} needs a value (--ttl 1h)`)
      ttl = token.value
    } else if (token.name in SWITCHES) {
      if (token.value !== undefined) throw new UsageError(`${token.rawName} takes no value`)
      switches.add(token.name)
    } else {
      throw unknownFlag(token.rawName)
    }
  }

  const [first = 'serve', ...rest] = positionals
  if (first === 'help') {
    if (rest.length > 1) throw new UsageError(`unexpected argument "${rest[1] ?? ''}" (blog-read-api help [COMMAND])`)
    return rest[0] === undefined ? { action: 'help' } : { action: 'help', command: checkCommand(rest[0]) }
  }
  const command = checkCommand(first)
  if (switches.has('version')) return { action: 'version' }
  if (switches.has('help')) return positionals.length === 0 ? { action: 'help' } : { action: 'help', command }
  const dryRun = switches.has('dry-run')
  const search = switches.has('search')
  if (search && command !== 'migrate') throw new UsageError('--search applies to migrate only')
  if (ttl !== undefined && command !== COMMAND_FLAGS.ttl) throw new UsageError('--ttl applies to preview-url only')
  if (command === 'import') {
    if (rest.length === 0) throw new UsageError('import needs at least one file or folder (blog-read-api import <file or folder>... [--dry-run] [--body-column NAME])')
  } else if (command === 'preview-url') {
    if (rest.length !== 1) throw new UsageError('preview-url needs one slug (blog-read-api preview-url SLUG [--ttl 1h])')
    if (dryRun) throw new UsageError('--dry-run applies to import only')
    if (bodyColumn !== undefined) throw new UsageError('--body-column applies to import only')
    return { action: 'run', command, flags, inputs: rest, dryRun, ttl }
  } else {
    if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0] ?? ''}" (see blog-read-api help ${command})`)
    if (dryRun) throw new UsageError('--dry-run applies to import only')
    if (bodyColumn !== undefined) throw new UsageError('--body-column applies to import only')
  }
  return { action: 'run', command, flags, inputs: command === 'import' ? rest : [], dryRun, ...(search && { search }), ...(bodyColumn !== undefined && { bodyColumn }) }
}
