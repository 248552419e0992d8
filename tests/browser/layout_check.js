// What a reader of the page would see as broken, measured in the page as it is drawn:
//  - overlaps: two visible texts of different elements whose drawn lines cover each other by
//    more than 2 px both ways (text boxes, not element boxes, so padding never counts);
//  - cutOff: a table cell that does not lie whole inside its scrolling region (one has to
//    scroll sideways to find the column) or, outside any such region, inside the viewport;
//  - placeholderCut: an empty field whose placeholder (the hint of what to type) is wider than
//    the field's text box, so the reader sees only its start.
// Text hidden on purpose (closed <details>, visually hidden labels, zero-size boxes) is skipped.
() => {
  const SLACK = 2;
  const clippedAway = (element) => {
    for (let e = element; e && e !== document.documentElement; e = e.parentElement) {
      const style = getComputedStyle(e);
      if (style.visibility === "hidden" || style.display === "none" || style.opacity === "0") return true;
      if (style.clip !== "auto" && style.clip !== "") return true;
      if (style.clipPath !== "none") return true;
      if (e.tagName === "svg" || e.tagName === "SVG") return true;
      if (style.position === "absolute" && e.offsetWidth <= 1 && e.offsetHeight <= 1) return true;
    }
    return false;
  };
  const name = (e) => {
    const text = (e.innerText || e.textContent || "").trim().replace(/\s+/g, " ").slice(0, 40);
    return `${e.tagName.toLowerCase()}${e.id ? "#" + e.id : ""} "${text}"`;
  };
  // Text scrolled or cut out of an element that clips its overflow is not drawn there.
  const clippingFrames = (element) => {
    const frames = [];
    for (let e = element; e && e !== document.body; e = e.parentElement) {
      const style = getComputedStyle(e);
      if (style.overflowX !== "visible" || style.overflowY !== "visible") frames.push(e.getBoundingClientRect());
    }
    return frames;
  };
  const clip = (r, f) => {
    const left = Math.max(r.left, f.left), right = Math.min(r.right, f.right);
    const top = Math.max(r.top, f.top), bottom = Math.min(r.bottom, f.bottom);
    return {left, right, top, bottom, width: Math.max(0, right - left), height: Math.max(0, bottom - top)};
  };
  // Every drawn line of text, with the element that holds it.
  const lines = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.data.trim()) continue;
    const owner = node.parentElement;
    if (!owner || ["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "OPTION", "TITLE"].includes(owner.tagName)) continue;
    if (owner.closest("details:not([open]) > :not(summary)")) continue;
    if (clippedAway(owner)) continue;
    range.selectNodeContents(node);
    const frames = clippingFrames(owner);
    for (const drawn of range.getClientRects()) {
      const r = frames.reduce(clip, drawn);
      if (r.width > SLACK && r.height > SLACK) lines.push({owner, r});
    }
  }
  const overlaps = [];
  const seen = new Set();
  for (let i = 0; i < lines.length; i++) {
    for (let j = i + 1; j < lines.length; j++) {
      const a = lines[i], b = lines[j];
      if (a.owner === b.owner) continue;
      const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
      const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
      if (w > SLACK && h > SLACK) {
        const key = name(a.owner) + " / " + name(b.owner);
        if (!seen.has(key)) { seen.add(key); overlaps.push(key); }
      }
    }
  }
  const scrollRegion = (cell) => {
    for (let e = cell.parentElement; e && e !== document.body; e = e.parentElement) {
      const overflow = getComputedStyle(e).overflowX;
      if (overflow !== "visible") return e;
    }
    return null;
  };
  const cutOff = [];
  for (const cell of document.querySelectorAll("td, th")) {
    const box = cell.getBoundingClientRect();
    if (box.width === 0 || box.height === 0 || clippedAway(cell)) continue;
    const region = scrollRegion(cell);
    const frame = region ? region.getBoundingClientRect() : {left: 0, right: window.innerWidth};
    const left = Math.max(frame.left, 0), right = Math.min(frame.right, window.innerWidth);
    if (box.left < left - SLACK || box.right > right + SLACK) {
      cutOff.push(`${name(cell)} spans ${Math.round(box.left)}-${Math.round(box.right)} px, shown ${Math.round(left)}-${Math.round(right)} px`);
    }
  }
  const placeholderCut = [];
  const measure = document.createElement("canvas").getContext("2d");
  for (const field of document.querySelectorAll("input[placeholder], textarea[placeholder]")) {
    if (field.value || clippedAway(field) || field.offsetWidth === 0) continue;
    const style = getComputedStyle(field);
    measure.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const room = field.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const needed = measure.measureText(field.placeholder).width;
    if (field.tagName === "INPUT" && needed > room + SLACK) {
      placeholderCut.push(`${name(field)}#${field.id} "${field.placeholder}" needs ${Math.round(needed)} px, has ${Math.round(room)} px`);
    }
  }
  return {overlaps, cutOff, placeholderCut};
}
