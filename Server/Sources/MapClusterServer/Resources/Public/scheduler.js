// Changes to the markers on the map, applied a few milliseconds' worth at a time, so that no task holds the main
// thread long: a zoom step's hundred markers go in over a few frames, not in one long task.

/// A queue of operations run in slices of `budget` milliseconds, each slice a task of its own; `done` is called once
/// the queue is empty. `clock` and `defer` are the page's `performance.now` and `setTimeout` unless a test gives its own.
export function createScheduler(done, { budget = 8, clock = () => performance.now(), defer = (run) => setTimeout(run, 0) } = {}) {
  const work = [];
  let running = false;
  function pump() {
    const start = clock();
    while (work.length && clock() - start < budget) work.shift()();
    if (work.length) { defer(pump); return; }
    running = false;
    done();
  }
  return {
    /// Queues operations to run after those queued before.
    schedule(operations) {
      work.push(...operations);
      if (!running) { running = true; defer(pump); }
    },
    /// Whether operations are waiting or running.
    get busy() { return running; },
  };
}
