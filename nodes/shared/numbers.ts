/**
 * The number a value of a parameter or of the credential spells: a number as it is, a string that is not blank read as
 * a number, anything else NaN (which every check of a range refuses), so that "five" or an object never passes as 0.
 */
export function spelledNumber(value: unknown): number {
	if (typeof value === 'number') return value;
	return typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
}
