export declare const ROOT: string
export declare const DIST: string
export declare const CLIENT: string
/** What `npm run build` compiles, each with the tsc project that builds it. */
export declare const PROJECTS: ReadonlyArray<{ src: string, dist: string, tsconfig: string }>
/** The first module of `project` (its path from the root) whose output is missing or older than it; undefined when its dist/ is current. */
export declare function staleModule (project: { src: string, dist: string }): string | undefined
/** The first module of any project whose output is stale; undefined when every build is current. */
export declare function staleSource (): string | undefined
