import { Emitter } from "./emitter.ts";

type StoreEvents<S> = {
  change: { previous: S; current: S };
};

/** An observable value: `set` replaces it and notifies subscribers when it changed. */
export class Store<S> {
  #state: S;
  #events = new Emitter<StoreEvents<S>>();

  constructor(initial: S) {
    this.#state = initial;
  }

  get(): S {
    return this.#state;
  }

  set(next: S | ((previous: S) => S)): void {
    const previous = this.#state;
    const current = typeof next === "function" ? (next as (previous: S) => S)(previous) : next;
    if (Object.is(previous, current)) return;
    this.#state = current;
    this.#events.emit("change", { previous, current });
  }

  /** Calls `listener` after every change; returns a function that unsubscribes it. */
  subscribe(listener: (current: S, previous: S) => void): () => void {
    return this.#events.on("change", ({ previous, current }) => listener(current, previous));
  }
}
