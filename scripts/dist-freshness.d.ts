export declare const ROOT: string
export declare const SRC: string
export declare const DIST: string
/** The first src/ module (its path under src/) whose dist/ output is missing or older than it; undefined when dist/ is current. */
export declare function staleSource (): string | undefined
