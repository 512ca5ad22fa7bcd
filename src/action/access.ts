/**
 * Image access as the actions take it: the options, or a function giving them, called when the
 * action first needs them (so that a bad input is reported before the access flags are checked, in
 * the order the commands always reported them).
 */
import type { PullOptions } from "../image/index.js";

export type ImageAccess = PullOptions | (() => Promise<PullOptions>);

export const accessOf = async (a: ImageAccess | undefined): Promise<PullOptions> =>
  typeof a === "function" ? await a() : (a ?? {});

/** A containers registries.conf (`--registries-conf`), read and checked; the reader loads on use. */
export async function readRegistriesConf(
  path: string,
): Promise<ReturnType<typeof import("../image/registries.js").loadRegistriesConf>> {
  return (await import("../image/registries.js")).loadRegistriesConf({ path });
}
