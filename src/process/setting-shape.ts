// The shape of a setting in the settings table (src/settings.ts), the commands that read
// settings, and the groups of commands most settings are read by.
import type { z } from 'zod'

/** The commands of the `blog-read-api` executable. */
export const COMMAND_NAMES = ['serve', 'front', 'posts-api', 'migrate', 'seed', 'import', 'preview-url'] as const
export type CommandName = typeof COMMAND_NAMES[number]

export interface Setting {
  /** How help shows the value: `--blog-port PORT`. */
  readonly value: string
  /** Taken when neither the environment nor a flag gives a value; undefined: the setting stays unset. */
  readonly default: string | undefined
  /** What leaving it unset means, when there is no default ("if unset, …"). */
  readonly unset?: string
  /** The text an empty value stands for; without it, an empty value is unset (the default applies). */
  readonly empty?: string
  /** One line, for `--help`. */
  readonly help: string
  /** The documentation's text (Markdown), when it says more than `help`. */
  readonly doc?: string
  /** From the text given (or the default) to the value the process uses; its first issue is the one-line reason. */
  readonly schema: z.ZodType
  readonly readBy: readonly CommandName[]
}

export const SERVING = ['serve', 'front', 'posts-api'] as const
export const FRONT = ['serve', 'front'] as const
export const POSTS = ['serve', 'posts-api'] as const
export const STORE = ['serve', 'posts-api', 'migrate', 'seed', 'import'] as const
