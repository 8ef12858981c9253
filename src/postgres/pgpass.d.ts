/** The password file's lookup the `pg` driver depends on (`pgpass`), which ships no types. */
declare module 'pgpass' {
  /** Where a connection goes, as the password file's lines name it. */
  export interface PasswordFileTarget {
    readonly host?: string;
    readonly port?: number | string;
    readonly database?: string;
    readonly user?: string;
  }
  /** Calls `done` with the password the file (`PGPASSFILE`, else `~/.pgpass`) gives `target`, or undefined. */
  function pgpass(target: PasswordFileTarget, done: (password: string | undefined) => void): void;
  export default pgpass;
}
