package io.flinfer.runtime.kernel;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * A fixed set of threads that run one {@link Task} split into as many parts as there are threads,
 * the caller running part 0, and any part whose worker has not started by the time part 0 is done.
 * Owns its worker threads.
 *
 * <p>Forward passes dispatch dozens of tasks per step, so workers spin briefly before parking and a
 * dispatch allocates nothing.
 */
public final class WorkerPool implements AutoCloseable {

  /** A unit of parallel work; {@code run(part, parts)} does the part'th of {@code parts}. */
  public interface Task {
    void run(int part, int parts);
  }

  private static final long SPIN_NANOS = 200_000;

  private final int threads;
  private final Thread[] workers;
  private final boolean[] parkedFlags;
  private final AtomicInteger remaining = new AtomicInteger();
  private final AtomicLongArray claims;
  private volatile Task task;
  private volatile long generation;
  private volatile boolean closed;
  private volatile Throwable failure;

  public WorkerPool(int threads) {
    if (threads < 1) {
      throw new IllegalArgumentException("threads must be at least 1: " + threads);
    }
    this.threads = threads;
    this.workers = new Thread[threads - 1];
    this.parkedFlags = new boolean[threads];
    this.claims = new AtomicLongArray(threads);
    for (int i = 1; i < threads; i++) {
      final int part = i;
      Thread t = new Thread(() -> workLoop(part), "flinfer-worker-" + i);
      t.setDaemon(true);
      workers[i - 1] = t;
      t.start();
    }
  }

  public int threads() {
    return threads;
  }

  /** Runs {@code t} on every thread and returns when all parts are done. */
  public void run(Task t) {
    if (threads == 1) {
      t.run(0, 1);
      return;
    }
    task = t;
    remaining.set(threads - 1);
    generation++;
    for (int i = 1; i < threads; i++) {
      if (isParked(i)) {
        LockSupport.unpark(workers[i - 1]);
      }
    }
    Throwable own = null;
    try {
      t.run(0, threads);
      // A worker that has not started yet (parked, or without a core for the moment) would hold
      // the step up by its wake-up time: its part is run here instead.
      for (int i = 1; i < threads; i++) {
        if (claim(i, generation)) {
          try {
            t.run(i, threads);
          } finally {
            remaining.decrementAndGet();
          }
        }
      }
    } catch (Throwable e) {
      own = e;
    }
    while (remaining.get() != 0) {
      Thread.onSpinWait();
    }
    task = null;
    Throwable f = failure;
    failure = null;
    if (own != null || f != null) {
      Throwable e = own != null ? own : f;
      if (e instanceof RuntimeException) {
        throw (RuntimeException) e;
      }
      if (e instanceof Error) {
        throw (Error) e;
      }
      throw new IllegalStateException(e);
    }
  }

  /**
   * True for the one thread, worker or caller, that takes {@code part} of generation {@code gen}. A
   * worker that read a generation late finds a newer claim and takes nothing.
   */
  private boolean claim(int part, long gen) {
    while (true) {
      long current = claims.get(part);
      if (current >= gen) {
        return false;
      }
      if (claims.compareAndSet(part, current, gen)) {
        return true;
      }
    }
  }

  private synchronized boolean isParked(int part) {
    return parkedFlags[part];
  }

  private synchronized void setParked(int part, boolean parked) {
    parkedFlags[part] = parked;
  }

  private void workLoop(int part) {
    long seen = 0;
    while (!closed) {
      long spinStart = System.nanoTime();
      int spins = 0;
      while (generation == seen && !closed) {
        Thread.onSpinWait();
        if ((++spins & 63) == 0 && System.nanoTime() - spinStart > SPIN_NANOS) {
          setParked(part, true);
          if (generation == seen && !closed) {
            LockSupport.park(this);
          }
          setParked(part, false);
          spinStart = System.nanoTime();
        }
      }
      if (closed) {
        return;
      }
      seen = generation;
      Task t = task;
      if (!claim(part, seen)) {
        continue; // the caller ran this part
      }
      try {
        t.run(part, threads);
      } catch (Throwable e) {
        failure = e;
      } finally {
        remaining.decrementAndGet();
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    for (Thread w : workers) {
      LockSupport.unpark(w);
    }
  }
}
