export { Emitter } from "./emitter.ts";
export type { Listener } from "./emitter.ts";
export { Store } from "./store.ts";
