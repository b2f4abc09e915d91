// The command line's manners: help for every command (its arguments, exactly the settings it
// reads, its exit codes), the version, what each argument list parses to, and the rule that
// keeps a mistake, help and `migrate` fast: the executable's static imports reach no tier.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { dirname, relative, resolve } from 'node:path'
import { describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { parseCommandLine } from '../../src/cli/command-line.js'
import { commandHelp, generalHelp } from '../../src/cli/help.js'
import { COMMAND_NAMES, flagName, SETTING_NAMES, settingsReadBy } from '../../src/settings.js'
import { runCliHere } from '../helpers/cli.js'

describe('help', () => {
  test('--help, -h and help: the commands, each with its summary, and how to get a command\'s help', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const { code, stdout, stderr } = await runCliHere(args)
      assert.equal(code, 0)
      assert.equal(stderr, '')
      assert.equal(stdout, generalHelp())
    }
    for (const command of [...COMMAND_NAMES, 'help']) assert.match(generalHelp(), new RegExp(`^  ${command} +\\S`, 'm'), command)
    assert.match(generalHelp(), /blog-read-api help COMMAND/)
    assert.match(generalHelp(), /--version/)
  })

  for (const command of COMMAND_NAMES) {
    test(`${command}: COMMAND --help and help COMMAND give its usage, exactly the settings it reads, and its exit codes`, async () => {
      const viaFlag = await runCliHere([command, '--help'])
      const viaHelp = await runCliHere(['help', command])
      assert.equal(viaFlag.code, 0)
      assert.equal(viaFlag.stdout, viaHelp.stdout)
      const text = viaFlag.stdout
      assert.equal(text, commandHelp(command))
      assert.match(text, new RegExp(`^Usage: blog-read-api ${command} `))
      const listed = [...text.matchAll(/^ {2}--([a-z-]+) .*\(([A-Z_]+); /gm)].map((match) => [match[1], match[2]])
      assert.deepEqual(listed, settingsReadBy(command).map((name) => [flagName(name), name]))
      assert.match(text, /^Exit codes:\n {2}0 {2}.+\n {2}1 {2}.+\n {2}2 {2}a mistake on the command line or in a setting/m)
    })
  }

  test('each command reads what it uses, and not what it does not', () => {
    assert.ok(settingsReadBy('front').includes('API_URL'))
    assert.ok(!settingsReadBy('front').includes('DATABASE_URL'))
    assert.ok(!settingsReadBy('posts-api').includes('BLOG_PORT'))
    assert.ok(settingsReadBy('import').includes('SLUG_PATTERN'))
    assert.ok(!settingsReadBy('migrate').includes('HOST'))
    assert.deepEqual(settingsReadBy('serve'), SETTING_NAMES, 'serve runs both tiers: it reads every setting')
  })

  test('import\'s help names its own arguments', () => {
    assert.match(commandHelp('import'), /^Usage: blog-read-api import <file or folder>\.\.\. \[--dry-run\]/)
    assert.match(commandHelp('import'), /^ {2}--dry-run {2,}check every file/m)
  })
})

test('--version prints the package\'s version', async () => {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  for (const args of [['--version'], ['serve', '--version']]) {
    const { code, stdout } = await runCliHere(args)
    assert.equal(code, 0)
    assert.equal(stdout, `blog-read-api ${version}\n`)
  }
})

test('what argument lists parse to', () => {
  assert.deepEqual(parseCommandLine([]), { action: 'run', command: 'serve', flags: {}, inputs: [], dryRun: false })
  assert.deepEqual(parseCommandLine(['--blog-port', '8000', 'front', '--api-url=http://h:1']),
    { action: 'run', command: 'front', flags: { BLOG_PORT: '8000', API_URL: 'http://h:1' }, inputs: [], dryRun: false })
  assert.deepEqual(parseCommandLine(['import', 'a.md', 'posts/', '--dry-run']), { action: 'run', command: 'import', flags: {}, inputs: ['a.md', 'posts/'], dryRun: true })
  assert.deepEqual(parseCommandLine(['import', '--', '--odd-name.md']), { action: 'run', command: 'import', flags: {}, inputs: ['--odd-name.md'], dryRun: false })
  assert.deepEqual(parseCommandLine(['migrate', '--search']), { action: 'run', command: 'migrate', flags: {}, inputs: [], dryRun: false, search: true })
  assert.throws(() => parseCommandLine(['serve', '--search']), /--search applies to migrate only/)
  assert.deepEqual(parseCommandLine(['help', 'seed']), { action: 'help', command: 'seed' })
  assert.deepEqual(parseCommandLine(['posts-api', '-h']), { action: 'help', command: 'posts-api' })
  assert.deepEqual(parseCommandLine(['-h']), { action: 'help' })
  // A negative number is a value (refused later, by the setting's schema), not a flag.
  assert.deepEqual(parseCommandLine(['--blog-port', '-1']), { action: 'run', command: 'serve', flags: { BLOG_PORT: '-1' }, inputs: [], dryRun: false })
})

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src')
// In the compiled module (imports of types erased, as the build erases them): the imports that load
// at once (`import … from '…'`, `import '…'`, `export … from '…'`, and `await import('…')` at the
// top level, as cli.ts loads the rest once the compile cache is on), not an `import('…')` inside a
// function.
const STATIC_IMPORT = /^(?:(?:import|export)\s(?:[^'"()]*?\sfrom\s*)?|await import\()['"]([^'"]+)['"]/gm

/** The src/ modules `file` loads at once, through any chain of static imports. */
function loadedWith (file: string, seen = new Set<string>()): Set<string> {
  const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
    fileName: file,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true }
  })
  for (const match of outputText.matchAll(STATIC_IMPORT)) {
    const specifier = match[1] ?? ''
    if (!specifier.startsWith('.')) continue
    const imported = resolve(dirname(file), specifier).replace(/\.js$/, '.ts')
    if (seen.has(imported)) continue
    seen.add(imported)
    loadedWith(imported, seen)
  }
  return seen
}

test('the executable loads no tier, store, importer or operations module until a command needs it', () => {
  const loaded = [...loadedWith(resolve(SRC, 'cli.ts'))].map((file) => relative(SRC, file))
  assert.ok(loaded.includes('settings.ts') && loaded.includes('cli/main.ts'), `the scan sees imports: ${loaded.join(', ')}`)
  const heavy = loaded.filter((file) => /^(front|posts-api|store|import|ops|http)\/|^process\/lifecycle/.test(file))
  assert.deepEqual(heavy, [])
})
