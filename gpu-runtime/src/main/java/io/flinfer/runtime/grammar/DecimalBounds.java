package io.flinfer.runtime.grammar;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;

/**
 * A number's {@code minimum}, {@code maximum}, {@code exclusiveMinimum}, {@code exclusiveMaximum}
 * and {@code multipleOf}, kept digit by digit: a number with at most {@link #integerDigits} digits
 * before its point and {@link #fractionDigits} after it (18 in all, no exponent), so that every
 * value that can be written is a whole count of units of 10^-fractionDigits in a long, the bounds
 * are inclusive counts of those units, and the values that are multiples are the multiples of a
 * step of units. Integers have no fraction digits. Immutable.
 *
 * <p>The values a prefix can still become always make one run of consecutive units (any further
 * digits), so whether one of them is within the bounds and a multiple is a division, not a search.
 */
final class DecimalBounds {
  private static final int DIGITS = 18;
  private static final long[] POWERS = new long[DIGITS + 1];

  static {
    POWERS[0] = 1;
    for (int i = 1; i <= DIGITS; i++) {
      POWERS[i] = POWERS[i - 1] * 10;
    }
  }

  final int integerDigits;
  final int fractionDigits;
  private final long lowest;
  private final long highest;

  /** The units every value must be a multiple of (1: any value). */
  private final long step;

  private DecimalBounds(
      int integerDigits, int fractionDigits, long lowest, long highest, long step) {
    this.integerDigits = integerDigits;
    this.fractionDigits = fractionDigits;
    this.lowest = lowest;
    this.highest = highest;
    this.step = step;
  }

  /**
   * The bounds of schema {@code s}, or null when it has none. An integer keeps 18 digits; a number
   * as many integer digits as its bounds need (9 where a side is open) and the rest after its
   * point.
   *
   * @throws IllegalArgumentException when a bound is not a number, {@code multipleOf} is not a
   *     positive number, or no value is within the bounds and a multiple
   */
  static DecimalBounds of(JsonNode s, boolean integer) {
    BigDecimal min = bound(s, "minimum");
    BigDecimal exclusiveMin = bound(s, "exclusiveMinimum");
    BigDecimal max = bound(s, "maximum");
    BigDecimal exclusiveMax = bound(s, "exclusiveMaximum");
    BigDecimal multiple = bound(s, "multipleOf");
    if (multiple != null && multiple.signum() <= 0) {
      throw new IllegalArgumentException("multipleOf must be greater than 0");
    }
    if (min == null
        && exclusiveMin == null
        && max == null
        && exclusiveMax == null
        && multiple == null) {
      return null;
    }
    int whole = DIGITS;
    if (!integer) {
      whole =
          (min == null && exclusiveMin == null) || (max == null && exclusiveMax == null) ? 9 : 1;
      for (BigDecimal b : new BigDecimal[] {min, exclusiveMin, max, exclusiveMax}) {
        if (b != null) {
          whole = Math.max(whole, b.abs().setScale(0, RoundingMode.DOWN).toPlainString().length());
        }
      }
      whole = Math.min(whole, DIGITS);
    }
    int fraction = DIGITS - whole;
    long limit = POWERS[DIGITS] - 1;
    long low = -limit;
    long high = limit;
    if (min != null) {
      low = Math.max(low, units(min, fraction, RoundingMode.CEILING, 0));
    }
    if (exclusiveMin != null) {
      low = Math.max(low, units(exclusiveMin, fraction, RoundingMode.FLOOR, 1));
    }
    if (max != null) {
      high = Math.min(high, units(max, fraction, RoundingMode.FLOOR, 0));
    }
    if (exclusiveMax != null) {
      high = Math.min(high, units(exclusiveMax, fraction, RoundingMode.CEILING, -1));
    }
    long step = multiple == null ? 1 : step(multiple, fraction);
    if (low > high || Math.floorDiv(high, step) * step < low) {
      throw new IllegalArgumentException(
          "no "
              + (integer ? "integer" : "number of at most 18 digits")
              + " is within its bounds"
              + (multiple == null ? "" : " and a multiple of " + multiple.toPlainString()));
    }
    return new DecimalBounds(whole, fraction, low, high, step);
  }

  /**
   * The units whose multiples are the multiples of {@code m} that can be written with {@code
   * fraction} digits: m in units is p / q in lowest terms, and k * p / q is whole exactly when q
   * divides k, so they are the multiples of p (of 1 when m is finer than the grid). A p past 18
   * digits leaves only zero.
   */
  private static long step(BigDecimal m, int fraction) {
    BigDecimal u = m.movePointRight(fraction).stripTrailingZeros();
    BigInteger p = u.unscaledValue();
    if (u.scale() > 0) {
      p = p.divide(p.gcd(BigInteger.TEN.pow(u.scale())));
    } else {
      p = p.multiply(BigInteger.TEN.pow(-u.scale()));
    }
    return p.compareTo(BigInteger.valueOf(POWERS[DIGITS])) > 0 ? Long.MAX_VALUE : p.longValue();
  }

  private static BigDecimal bound(JsonNode s, String key) {
    JsonNode v = s.get(key);
    if (v == null) {
      return null;
    }
    if (!v.isNumber()) {
      throw new IllegalArgumentException(key + " must be a number");
    }
    return v.decimalValue();
  }

  /** {@code v} in units of 10^-fraction, rounded, moved by {@code step}, within 18 digits. */
  private static long units(BigDecimal v, int fraction, RoundingMode rounding, int step) {
    BigDecimal u = v.movePointRight(fraction).setScale(0, rounding);
    BigDecimal limit = BigDecimal.valueOf(POWERS[DIGITS]);
    if (u.compareTo(limit) >= 0) {
      return POWERS[DIGITS];
    }
    if (u.compareTo(limit.negate()) <= 0) {
      return -POWERS[DIGITS];
    }
    return u.longValueExact() + step;
  }

  /** The units of an integer part {@code m}. */
  long units(long m) {
    return m * POWERS[fractionDigits];
  }

  /** The units of a fraction digit of value 1 at place {@code place} (1: tenths). */
  long unitsAt(int place) {
    return POWERS[fractionDigits - place];
  }

  /** Whether the value of {@code units} (and sign) is within the bounds and a multiple. */
  boolean contains(boolean negative, long units) {
    long v = negative ? -units : units;
    return v >= lowest && v <= highest && v % step == 0;
  }

  /**
   * Whether a number whose integer part so far is {@code m}, of {@code digits} digits (0: only a
   * sign), can still end within the bounds: with k more integer digits (none after a leading zero),
   * then any fraction.
   */
  boolean reachable(boolean negative, long m, int digits) {
    boolean leadingZero = digits == 1 && m == 0;
    for (int k = digits == 0 ? 1 : 0; k <= (leadingZero ? 0 : integerDigits - digits); k++) {
      long span = POWERS[k + fractionDigits];
      long low = m * span;
      if (meets(negative, low, low + span - 1)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether a number at {@code units} with {@code places} fraction digits so far can still end
   * within the bounds, with any further fraction digits.
   */
  boolean reachableAfterPoint(boolean negative, long units, int places) {
    return places <= fractionDigits
        && meets(negative, units, units + POWERS[fractionDigits - places] - 1);
  }

  /**
   * Whether one of the values from {@code low} to {@code high} units (with the sign) is within the
   * bounds and a multiple: the largest multiple up to the run's top is at least its bottom.
   */
  private boolean meets(boolean negative, long low, long high) {
    long from = Math.max(negative ? -high : low, lowest);
    long to = Math.min(negative ? -low : high, highest);
    return from <= to && Math.floorDiv(to, step) * step >= from;
  }
}
