// Stand-in for the MathJax script nbconvert links from a CDN: the site is built and
// served offline, and the notebook pages need no TeX rendering.
