// Why a serving process cannot start, worded for the person starting it, naming the setting to
// change: a port in use (or not ours to take), a SQLite file that is not there.
import { flagName, type SettingName } from '../settings.js'

/** A start-up failure whose message is the whole line for the user (exit code 1). */
export class StartError extends Error {
  constructor (message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'StartError'
  }
}

export type PortSetting = Extract<SettingName, 'BLOG_PORT' | 'POSTS_PORT' | 'ADMIN_PORT'>

/** A listen error as a line naming the setting and what to do; undefined when it is not the address's fault. */
export function listenFailure (err: unknown, setting: PortSetting, host: string, port: number): StartError | undefined {
  const where = `port ${port} (${setting}) on ${host}`
  const change = `set another with ${setting} or --${flagName(setting)}`
  switch ((err as NodeJS.ErrnoException | undefined)?.code) {
    case 'EADDRINUSE':
      return new StartError(`cannot start: ${where} is in use by another process; stop it, or ${change}`, { cause: err })
    case 'EACCES':
      return new StartError(`cannot start: no permission to listen on ${where}; ${change} (above 1023)`, { cause: err })
    case 'EADDRNOTAVAIL':
      return new StartError(`cannot start: HOST ${host} is not an address of this machine (for ${setting}); set HOST or --host to one of its own`, { cause: err })
    default:
      return undefined
  }
}

/** A SQLite file the user named (DATABASE_URL) that does not exist: the post API only reads it. */
export function missingDatabaseFile (filename: string, defaultFile: string): StartError {
  return new StartError(`cannot start: the SQLite file ${filename} (DATABASE_URL) does not exist; \`blog-read-api migrate\` creates it ` +
    `(then \`seed\` or \`import\` fills it), or unset DATABASE_URL to serve the embedded default ${defaultFile}`)
}
