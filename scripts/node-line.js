// An official Node.js binary of a major line, from the npm registry (the `node-<os>-<arch>`
// packages the Node.js project publishes there), unpacked into a cache outside the repository:
// `${XDG_CACHE_HOME:-~/.cache}/blog-read-api/node-<line>`. Used by CI to run the suites on each
// supported line, and by the launcher to run the project on a supported line where the
// machine's Node is older. Plain JavaScript that runs on any Node from 18: it must work on the
// Node it replaces.
//
//   node scripts/node-line.js 24             prints the folder (fetched when absent)
//   node scripts/node-line.js 24 --refresh   also fetches the line's newest release when newer
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

/** Where the binaries of every line are cached. */
export function nodeLineCache (env = process.env) {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'blog-read-api')
}

/** The npm package holding this machine's official binary. */
function packageName () {
  const os = { linux: 'linux', darwin: 'darwin', win32: 'win' }[process.platform]
  if (os === undefined || !['x64', 'arm64'].includes(process.arch)) {
    throw new Error(`no official Node.js package on the npm registry for ${process.platform}-${process.arch}`)
  }
  return `node-${os}-${process.arch}`
}

function run (command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options })
  if (result.error !== undefined) throw result.error
  return result
}

/** The version of the node in `dir`, or undefined when there is none. */
function installedVersion (dir) {
  const node = join(dir, 'bin', 'node')
  if (!existsSync(node)) return undefined
  const { status, stdout } = run(node, ['--version'])
  return status === 0 ? stdout.trim().replace(/^v/, '') : undefined
}

/** The line's newest release on the registry, or undefined when the registry cannot tell. */
function newestRelease (name, line) {
  const { status, stdout } = run('npm', ['view', `${name}@${line}`, 'version', '--json'])
  if (status !== 0) return undefined
  // A single match comes as a bare string, several as an array in no numeric order.
  const versions = [].concat(JSON.parse(stdout)).filter((v) => new RegExp(`^${line}\\.\\d+\\.\\d+$`).test(v))
  const key = (v) => v.split('.').map(Number)
  return versions.sort((a, b) => key(a)[1] - key(b)[1] || key(a)[2] - key(b)[2]).at(-1)
}

/**
 * The folder of a Node.js binary of `line` (its `bin/node`), fetched into the cache when absent,
 * or with `refresh` when the registry has a newer release of the line. Without the registry,
 * a cached one will do.
 */
export function nodeLineDir (line, { refresh = false, log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  const cache = nodeLineCache()
  const dir = join(cache, `node-${line}`)
  const installed = installedVersion(dir)
  if (installed !== undefined && !refresh) return dir
  const name = packageName()
  const newest = newestRelease(name, line)
  if (newest === undefined) {
    if (installed !== undefined) return dir
    throw new Error(`cannot resolve ${name}@${line} on the npm registry, and none is cached in ${dir}`)
  }
  if (installed === newest) return dir
  mkdirSync(cache, { recursive: true })
  const work = mkdtempSync(join(cache, `.fetch-${line}-`))
  try {
    log(`fetching Node.js ${newest} (${name}) from the npm registry into ${dir}`)
    if (run('npm', ['pack', `${name}@${newest}`, '--silent'], { cwd: work }).status !== 0) throw new Error(`npm pack ${name}@${newest} failed`)
    const tarball = readdirSync(work).find((file) => file.endsWith('.tgz'))
    if (tarball === undefined || run('tar', ['-xzf', tarball], { cwd: work }).status !== 0) throw new Error(`cannot unpack ${name}@${newest}`)
    if (installedVersion(join(work, 'package')) !== newest) throw new Error(`the unpacked ${name}@${newest} does not run here`)
    rmSync(dir, { recursive: true, force: true })
    renameSync(join(work, 'package'), dir)
    return dir
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [line, flag] = process.argv.slice(2)
  if (!/^\d+$/.test(line ?? '') || (flag !== undefined && flag !== '--refresh')) {
    process.stderr.write('usage: node scripts/node-line.js <major line, e.g. 24> [--refresh]\n')
    process.exit(2)
  }
  try {
    process.stdout.write(`${nodeLineDir(line, { refresh: flag === '--refresh' })}\n`)
  } catch (err) {
    process.stderr.write(`${err.message}\n`)
    process.exit(1)
  }
}
