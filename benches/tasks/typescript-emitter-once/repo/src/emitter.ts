export type Listener<T> = (payload: T) => void;

/**
 * A minimal typed event emitter.
 *
 * ```ts
 * const events = new Emitter<{ saved: { id: string }; closed: undefined }>();
 * const stop = events.on("saved", ({ id }) => console.log("saved", id));
 * events.emit("saved", { id: "a1" });
 * stop();
 * ```
 */
export class Emitter<Events extends { [name: string]: unknown }> {
  #listeners = new Map<keyof Events, Set<Listener<any>>>();

  /** Calls `listener` on every emit of `event`; returns a function that unsubscribes it. */
  on<K extends keyof Events>(event: K, listener: Listener<Events[K]>): () => void {
    let set = this.#listeners.get(event);
    if (!set) {
      set = new Set();
      this.#listeners.set(event, set);
    }
    set.add(listener);
    return () => this.off(event, listener);
  }

  /** Removes `listener` from `event`; does nothing if it was not registered. */
  off<K extends keyof Events>(event: K, listener: Listener<Events[K]>): void {
    const set = this.#listeners.get(event);
    if (!set) return;
    set.delete(listener);
    if (set.size === 0) this.#listeners.delete(event);
  }

  /** Calls every listener of `event` with `payload`, in the order they were added. */
  emit<K extends keyof Events>(event: K, payload: Events[K]): void {
    const set = this.#listeners.get(event);
    if (!set) return;
    // Copy first: listeners may subscribe or unsubscribe while we iterate.
    for (const listener of [...set]) {
      listener(payload);
    }
  }

  /** How many listeners `event` has. */
  listenerCount(event: keyof Events): number {
    return this.#listeners.get(event)?.size ?? 0;
  }

  /** Removes every listener of `event`, or of all events when none is given. */
  clear(event?: keyof Events): void {
    if (event === undefined) {
      this.#listeners.clear();
    } else {
      this.#listeners.delete(event);
    }
  }
}
