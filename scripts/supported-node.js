// Which Node.js runs the project's commands: the running one when package.json's `engines`
// allows it, else a supported line (RUN_LINE) fetched once from the npm registry into a cache
// outside the repository (scripts/node-line.js). The machine's Node may be older than every
// supported line, such as Node 20 (past its end of life, and without the Node-API the SQLite
// binding needs). scripts/on-supported-node.js runs commands with it. Plain JavaScript that runs
// on any Node from 18.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { nodeLineDir } from './node-line.js'

/** The line that runs the project where the machine's Node is older than every supported line. */
export const RUN_LINE = '24'

/** Set in the child: it never fetches again, whatever its version (no loop). */
export const MARKER = 'BLOG_READ_API_SUPPORTED_NODE'

const engines = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines.node

const parts = (version) => version.replace(/^v/, '').split('.').map(Number)
const atLeast = ([a, b, c], [x, y, z]) => a !== x ? a > x : b !== y ? b > y : c >= z

/** Whether `version` satisfies `range`, in the forms `engines` uses: `^X.Y.Z` and `>=X.Y.Z`, joined by `||`. */
export function satisfies (version, range) {
  const have = parts(version)
  return range.split('||').some((alternative) => {
    const match = /^\s*(\^|>=)(\d+)\.(\d+)\.(\d+)\s*$/.exec(alternative)
    if (match === null) throw new Error(`supported-node.js cannot read the engines range "${alternative.trim()}"`)
    const want = match.slice(2).map(Number)
    return atLeast(have, want) && (match[1] === '>=' || have[0] === want[0])
  })
}

/** The folder of a supported Node's `bin`, or undefined when the running Node is supported (or is already the one chosen). */
export function supportedNodeBin (version = process.version, env = process.env) {
  if (env[MARKER] !== undefined || satisfies(version, engines)) return undefined
  const dir = nodeLineDir(RUN_LINE)
  process.stderr.write(`Node.js ${version} is older than the supported lines (${engines}): running on Node.js ${RUN_LINE} from ${dir}\n`)
  return join(dir, 'bin')
}

/** Runs `command`, with `bin` first in PATH when given (and told it is the chosen one); resolves with the status to exit with (128 + n for a signal). */
export function runChild (command, args, bin) {
  const env = bin === undefined ? process.env : { ...process.env, [MARKER]: '1', PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` }
  const child = spawn(command, args, { stdio: 'inherit', env })
  const forward = (signal) => { child.kill(signal) }
  process.on('SIGINT', forward)
  process.on('SIGTERM', forward)
  return new Promise((resolve) => {
    child.on('error', (err) => {
      process.stderr.write(`cannot run ${command}: ${err.message}\n`)
      resolve(1)
    })
    child.on('exit', (code, signal) => resolve(code ?? 128 + ({ SIGINT: 2, SIGTERM: 15 }[signal] ?? 1)))
  })
}
