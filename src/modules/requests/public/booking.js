// The ALTCHA widget's CSP-friendly build ships no workers: its SHA-256 solver is served from
// this origin too (/book-assets/altcha-sha.js), so the page needs no blob: or inline script.
globalThis.$altcha?.algorithms.set('SHA-256', () => new Worker('/book-assets/altcha-sha.js'));
