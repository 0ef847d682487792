// site.js: what every page of the course runs: the math rendered by KaTeX, and the search box.
'use strict';

// pandoc marks TeX as <span class="math inline"> or <span class="math display">; KaTeX (a copy
// of Debian's libjs-katex, in katex/) draws it in place. TeX it cannot parse is reported on the
// console, which the browser test treats as a failure.
document.querySelectorAll('span.math').forEach(el => {
  try {
    katex.render(el.textContent, el, {displayMode: el.classList.contains('display'), throwOnError: true});
  } catch (e) {
    console.error('KaTeX could not render "' + el.textContent + '": ' + e.message);
  }
});

// The search box: every section of every page (search.js, SEARCH_INDEX) holds its heading and
// text; a section matches when it contains every word typed (any case; Chinese matches by
// substring, which needs no word breaks). This page's language first, headings before text.
(function () {
  const box = document.getElementById('search'), list = document.getElementById('results');
  if (!box || typeof SEARCH_INDEX === 'undefined') return;
  const root = document.body.dataset.root, lang = document.body.dataset.lang;
  function snippet(text, term) {
    const at = Math.max(0, text.toLowerCase().indexOf(term) - 60);
    return (at > 0 ? '… ' : '') + text.slice(at, at + 160) + (at + 160 < text.length ? ' …' : '');
  }
  function item(href, title, heading, text) {
    const li = document.createElement('li'), a = document.createElement('a');
    a.href = href;
    const b = document.createElement('b'); b.textContent = title; a.appendChild(b);
    if (heading && heading !== title) a.appendChild(document.createTextNode(' › ' + heading));
    const small = document.createElement('small'); small.textContent = text; a.appendChild(small);
    li.appendChild(a); return li;
  }
  function search() {
    const terms = box.value.toLowerCase().split(/\s+/).filter(Boolean);
    list.innerHTML = '';
    if (!terms.length) { list.hidden = true; return; }
    const hits = [];
    for (const page of SEARCH_INDEX) for (const s of page.s) {
      const head = s.h.toLowerCase(), hay = head + ' ' + s.t.toLowerCase();
      if (!terms.every(t => hay.includes(t))) continue;
      hits.push({page, s, score: (page.lang === lang ? 0 : 100) + (terms.every(t => head.includes(t)) ? 0 : 10)});
    }
    hits.sort((a, b) => a.score - b.score);
    for (const h of hits.slice(0, 40))
      list.appendChild(item(root + h.page.url + (h.s.a ? '#' + h.s.a : ''), h.page.title, h.s.h, snippet(h.s.t, terms[0])));
    if (!hits.length) {
      const li = document.createElement('li'); li.className = 'none';
      li.textContent = lang === 'zh' ? '没有找到' : 'Nothing found'; list.appendChild(li);
    }
    list.hidden = false;
  }
  box.addEventListener('input', search);
  box.addEventListener('keydown', e => {
    const first = list.querySelector('a');
    if (e.key === 'Enter' && first) window.location.href = first.href;
    if (e.key === 'Escape') { box.value = ''; search(); }
  });
  document.addEventListener('click', e => { if (!e.target.closest('.search')) list.hidden = true; });
})();

// The side navigation scrolled to the page's lesson.
(function () {
  const nav = document.querySelector('nav.side'), current = document.querySelector('nav.side li.current');
  if (nav && current) nav.scrollTop = current.offsetTop - nav.clientHeight / 3;
})();
