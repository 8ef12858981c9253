/**
 * The shape of a bare hook's command line, read without loading anything: the binary's entry
 * point (`main.ts`) uses it to choose which bundle to load, and the bare hook (`bareHook.ts`)
 * to take its options.
 */

const LAYOUT = '--layout';

/**
 * The arguments after `hook` read as a bare hook's: `{}` for none, `{ layout }` for `--layout
 * VALUE` or `--layout=VALUE` alone (whether the value names a layout is not checked here), or
 * undefined for anything else.
 */
export const bareHookArgs = (args: ReadonlyArray<string>): { readonly layout?: string } | undefined => {
  if (args.length === 0) return {};
  if (args.length === 2 && args[0] === LAYOUT) return { layout: args[1]! };
  if (args.length === 1 && args[0]!.startsWith(`${LAYOUT}=`)) return { layout: args[0]!.slice(LAYOUT.length + 1) };
  return undefined;
};
