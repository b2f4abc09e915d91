/** The line that runs the project where the machine's Node is older than every supported line. */
export declare const RUN_LINE: string
/** Whether `version` satisfies `range`, in the forms `engines` uses: `^X.Y.Z` and `>=X.Y.Z`, joined by `||`. */
export declare function satisfies (version: string, range: string): boolean
/** The folder of a supported Node's `bin`, or undefined when the running Node is supported. */
export declare function supportedNodeBin (version?: string, env?: NodeJS.ProcessEnv): string | undefined
/** Set in the child: it never fetches again, whatever its version (no loop). */
export declare const MARKER: string
/** Runs `command`, with `bin` first in PATH when given; resolves with the status to exit with (128 + n for a signal). */
export declare function runChild (command: string, args: string[], bin: string | undefined): Promise<number>
