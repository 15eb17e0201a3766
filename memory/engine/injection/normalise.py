"""Normalisation (SPEC P4): NFKC, look-alike and Traditional-Chinese folding, markdown/HTML wrappers, zero-width
characters. Every view the rules and the classifier see starts here. Standard library only."""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# Zero-width and invisible format characters (soft hyphen, ZW space/joiners, word joiner, invisible operators,
# BOM, Mongolian vowel separator, bidi marks and overrides). Unicode tag characters are handled separately.
_ZW_CHARS = (
    "\u00ad\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\ufeff"
)
_ZW_RE = re.compile(f"[{_ZW_CHARS}\U000e0000-\U000e007f]")
_TAG_RUN = re.compile("[\U000e0020-\U000e007e]{4,}")
_ZW_INSIDE = re.compile(f"\\w[{_ZW_CHARS}]+\\w")
_JOINERS = "\u200c\u200d"

# Look-alikes that NFKC leaves alone. Upper-case forms map before lower-casing (Greek capital eta looks like H,
# small eta like n).
_HOMOGLYPH_PAIRS = (
    # Cyrillic capitals, then small letters
    ("АВЕКМНОРСТУХЅІЈԚԜӀ", "ABEKMHOPCTYXSIJQWI"),
    ("аеорсухѕіїјһԁԛԝӏкмнтвгпьшёɡ", "aeopcyxsiijhdqwlkmhtbrnbweg"),
    # Greek capitals, then small letters
    ("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX"),
    ("αβεηικνοπρτυχγωμς", "abenikvonptuxywuc"),
    # Armenian and Latin small capitals / IPA look-alikes
    ("օսոհցա", "ounhga"),
    ("ᴀʙᴄᴅᴇɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢıɑ", "abcdeghijklmnoprstuvwyzia"),
)
_HOMOGLYPHS = {ord(a): b for src, dst in _HOMOGLYPH_PAIRS for a, b in zip(src, dst, strict=True)}
_HOMOGLYPH_CLASS = "".join(sorted({chr(k).lower() for k in _HOMOGLYPHS} - set("abcdefghijklmnopqrstuvwxyz")))
# a word mixing Latin letters with look-alikes (checked on lower-cased NFKC text)
_MIXED_SCRIPT = re.compile(f"[a-z][{_HOMOGLYPH_CLASS}]|[{_HOMOGLYPH_CLASS}][a-z]")
# Turkish dotless ı is a Latin letter of its own: folded to "i" for matching like the look-alikes, but in a text
# that has other Turkish letters it is Turkish, not a mixed-script trick ("talimatları" is no "ınstructions")
_TURKISH = re.compile("[şğçöüŞĞÇÖÜİ]")
_NOT_DOTLESS = _HOMOGLYPH_CLASS.replace("ı", "")
_MIXED_SCRIPT_TR = re.compile(f"[a-z][{_NOT_DOTLESS}]|[{_NOT_DOTLESS}][a-z]")

# Traditional -> Simplified for the characters the Chinese rules use (and their common neighbours), so every
# Chinese rule is written once in Simplified form. Vocabulary that differs by region (金鑰/密钥, 使用者/用户,
# 訊息/消息 ...) is spelled out in the rules.
_T2S_PAIRS = (
    "們们個个這这對对發发從从開开現现請请說说讓让給给將将為为無无視视規规則则設设記记憶忆體体統统條条約约準准範范審审過过濾滤惡恶獄狱啟启動动換换變变裝装當当擬拟導导師师員员創创計计製制練练僅仅聽听隱隐內内"
    "詞词顯显輸输複复誦诵寫写貼贴洩泄竊窃盜盗傳传轉转匯汇帳账戶户鑰钥環环數数證证護护欄栏錯错誤误話话會会刪删銷销毀毁識识檔档絡络頁页續续繼继進进階阶級级優优權权驗验碼码讀读閱阅問问題题應应該该麼么樣样長长"
    "間间閉闭關关畢毕圖图務务論论據据壓压縮缩譯译釋释種种屬属於于來来別别嗎吗氣气處处執执運运調调觸触訴诉裡里後后並并結结終终斷断資资庫库錄录紀纪歷历號号覆复網网訊讯郵邮還还遞递儲储愛爱態态衝冲擊击達达標标"
    "際际總总畫画劃划衛卫鐘钟歲岁實实嚴严謹谨構构獨独專专業业產产價价錢钱貨货幣币買买賣卖雲云載载遠远離离餘余勝胜敗败歡欢樂乐邊边滿满廣广場场點点擁拥擠挤書书館馆鐵铁車车機机區区塊块鏈链幫帮觀观電电腦脑備备"
    "註注銀银筆笔單单紅红綠绿燈灯類类萬万億亿報报紙纸雜杂誌志燒烧熱热溫温濕湿風风險险監监測测試试彙汇編编輯辑攝摄夠够歸归納纳聯联頂顶項项確确認认書书廳厅團团隊队門门殺杀滅灭壞坏適适鬆松緊紧張张講讲課课習习"
    "頭头殘残質质陽阳陰阴曆历舊旧聞闻傘伞燭烛鎖锁沒没丟丢係系偵侦兒儿兩两凱凯剛刚劇剧厲厉嬤嬷媽妈學学帶带幾几廚厨廠厂廢废復复戲戏擇择採采樞枢決决滾滚潔洁澆浇瀏浏煩烦爺爷爾尔牆墙稱称竅窍節节簡简紐纽紹绍經经"
    "維维線线繳缴罵骂義义腳脚薦荐蓋盖蠅蝇術术見见親亲覺觉覽览訂订討讨訓训訣诀謝谢議议貓猫費费購购賽赛輪轮辦办週周遊游遷迁選选鍋锅鑄铸閃闪陳陈隻只難难須须預预飯饭飼饲馬马駭骇騎骑驚惊驟骤麵面乾干壇坛夥伙東东"
    "時时棄弃許许誰谁負负趕赶違违鄰邻韓韩顏颜飛飞齊齐龍龙國国與与陸陆華华勞劳雙双參参響响聲声談谈醫医濟济藝艺療疗園园職职責责層层獎奖戰战農农輕轻異异擔担藥药鳥鸟魚鱼狀状獲获樓楼鹽盐蘋苹蔥葱籤签礙碍擴扩裏里"
    "佈布傢家佔占併并俠侠倉仓倫伦偉伟側侧債债傷伤傾倾儀仪償偿兇凶兌兑黨党冊册凍冻剝剥劍剑劑剂勁劲勢势勵励勸劝協协卻却厭厌叢丛吳吴呂吕喪丧嘆叹噴喷嚇吓囂嚣圍围圓圆塗涂塵尘墊垫墳坟壯壮壺壶壽寿夢梦奪夺奮奋妝妆"
    "婦妇孫孙寧宁寶宝尋寻屆届島岛峽峡崗岗嶺岭幹干廁厕廂厢強强彈弹彌弥徑径徵征恆恒惱恼慣惯慮虑憂忧憐怜憲宪懷怀懶懒戀恋拋抛捨舍掃扫掛挂揮挥損损搖摇攜携擋挡擺摆擾扰攤摊敵敌斂敛暫暂曉晓暈晕朧胧楊杨極极榮荣槍枪"
    "樹树橋桥橫横檢检櫃柜歐欧殼壳漢汉濃浓灣湾災灾爐炉爭争獵猎獻献瓊琼疊叠盡尽盤盘眾众睜睁礎础禍祸禦御稅税穩稳窮穷競竞築筑籃篮糧粮純纯紛纷紡纺細细組组絕绝絲丝綁绑綜综緒绪緩缓縣县績绩織织繞绕繪绘纏缠罰罚羅罗"
    "聖圣聰聪肅肃脅胁脫脱膽胆臉脸臨临舉举艙舱蘇苏蟲虫補补襲袭覓觅訪访診诊詐诈評评詢询詩诗詳详誇夸誘诱語语誠诚諮咨謀谋謊谎譜谱豐丰貝贝財财貢贡貧贫販贩貪贪貴贵貸贷賀贺賓宾賠赔賴赖賺赚贈赠贊赞趙赵躍跃軌轨軍军"
    "軟软較较輔辅輛辆輩辈辭辞遲迟遺遗邏逻鄉乡醜丑針针釣钓鈴铃鉛铅鋼钢錦锦鍵键鎮镇鏡镜鑑鉴閒闲闆板陣阵隨随雖虽雞鸡霧雾靈灵靜静韻韵順顺頓顿領领頻频額额顧顾颱台飲饮飽饱餅饼饋馈駐驻駕驾髮发鬥斗鬧闹鮮鲜鳴鸣麥麦"
    "黃黄齒齿龜龟著着喚唤嗎吗櫥橱軀躯憑凭歎叹啓启"
)
_T2S = {ord(t): s for t, s in zip(_T2S_PAIRS[0::2], _T2S_PAIRS[1::2], strict=True) if t != s}

_PUNCT_MAP = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u3000": " "}
_PUNCT_RE = re.compile("[" + "".join(_PUNCT_MAP) + "]")
_HOMOGLYPH_RE = re.compile("[" + "".join(chr(k) for k in _HOMOGLYPHS) + "]")
_T2S_RE = re.compile("[" + "".join(chr(k) for k in _T2S) + "]")

# markdown emphasis/quote/heading characters and backslash escapes, dropped from the text view
_MD_DROP = re.compile(r"[*`\\]+|~~+|~(?!/)")
_MD_SPACE = re.compile(r"[#>|]+")
_CODE_FENCE = re.compile(r"```[\w+-]*|~~~[\w+-]*")
_HTML_COMMENT_MARK = re.compile(r"<!--|-->")
_HTML_TAG = re.compile(r"</?[a-z][a-z0-9_:-]{0,30}(?:\s[^<>]{0,300})?/?>|<\|[a-z_]{1,30}\|>")
_HTML_ENTITY = re.compile(r"&(?:#\d{1,7}|#x[0-9a-f]{1,6}|[a-z]{2,8});")
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_ANY = re.compile(f"[{_CJK}]")
_CJK_GAP = re.compile(f"([{_CJK}])\\s+(?=[{_CJK}])")


def _trie_regex(words: Iterable[str]) -> str:
    """A regex matching any of ``words`` (longest first), as a character trie: Python's ``re`` tries one branch
    per character instead of every word at every position."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        branches = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(root)


def _fold_text(text: str, normalised: bool = False) -> str:
    """NFKC, look-alikes to Latin, lower-case, Traditional to Simplified, quotes folded (no ZW removal)."""
    if not normalised:
        text = unicodedata.normalize("NFKC", text)
    if text.isascii():
        return text.lower()
    text = _HOMOGLYPH_RE.sub(_homoglyph, text).lower()
    if _HOMOGLYPH_RE.search(text):  # a capital that is no look-alike lower-cases to one: "П" -> "п" -> "n"
        text = _HOMOGLYPH_RE.sub(_homoglyph, text)
    if "\u0307" in text:  # Turkish "İ" lower-cases to "i" and a combining dot above
        text = text.replace("i\u0307", "i")
    if _LATIN_ACCENTED.search(text):
        text = _LATIN_ACCENTED.sub(_unaccent, text)
    if _T2S_RE.search(text):
        text = _T2S_RE.sub(_t2s, text)
    return _PUNCT_RE.sub(_punct, text)


_LATIN_ACCENTED = re.compile("[\u00c0-\u00ff\u0100-\u024f\u1e00-\u1eff]+")


def _unaccent(m: re.Match[str]) -> str:
    """ "ǐgnore prevíous" -> "ignore previous": accents on Latin letters are dropped (CJK is left alone)."""
    return "".join(ch for ch in unicodedata.normalize("NFKD", m.group()) if not unicodedata.combining(ch))


def _homoglyph(m: re.Match[str]) -> str:
    return _HOMOGLYPHS[ord(m.group())]


def _t2s(m: re.Match[str]) -> str:
    return _T2S[ord(m.group())]


def _punct(m: re.Match[str]) -> str:
    return _PUNCT_MAP[m.group()]


def _collapse(text: str) -> str:
    text = " ".join(text.split())
    return _CJK_GAP.sub(r"\1", text) if not text.isascii() and _CJK_ANY.search(text) else text


_TAG_ATTR_TEXT = re.compile(
    r"""\b(?:alt|title|aria-label|content|placeholder|data-[a-z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')"""
)
_MD_UNDERSCORE = re.compile(r"(?<![a-z0-9])_+|_+(?![a-z0-9])")


def _tag_text(m: re.Match[str]) -> str:
    """A stripped tag leaves the text of its human-readable attributes (``<img alt="...">``): hidden text there
    is still read by a model."""
    tag = m.group()
    if "=" not in tag:
        return " "
    texts = [a or b for a, b in _TAG_ATTR_TEXT.findall(tag)]
    return f" {' '.join(t for t in texts if t)} " if texts else " "


def _strip_wrappers(text: str) -> str:
    if "&" in text and _HTML_ENTITY.search(text):
        text = html.unescape(text)
    if "<" in text:
        text = _HTML_COMMENT_MARK.sub(" ", text)
        text = _HTML_TAG.sub(_tag_text, text)
    if "```" in text or "~~~" in text:
        text = _CODE_FENCE.sub(" ", text)
    if "_" in text:  # "_emphasis_" and "__bold__", not snake_case names
        text = _MD_UNDERSCORE.sub(" ", text)
    if "*" in text or "`" in text or "\\" in text or "~" in text:  # what _MD_DROP can match
        text = _MD_DROP.sub("", text)
    if "#" in text or ">" in text or "|" in text:  # what _MD_SPACE can match
        text = _MD_SPACE.sub(" ", text)
    return text


def _count_zero_width(raw: str) -> int:
    """Invisible characters in the input. ZWJ/ZWNJ between two non-Latin characters (emoji sequences,
    Persian or Indic shaping) are legitimate and not counted; tag characters always are."""
    count = 0
    for m in _ZW_RE.finditer(raw):
        ch = m.group()
        if ch in _JOINERS:
            i = m.start()
            before = raw[i - 1] if i > 0 else ""
            after = raw[i + 1] if i + 1 < len(raw) else ""
            if before and after and ord(before) > 0x2FF and ord(after) > 0x2FF:
                continue
        count += 1
    return count


_NFKC_CHUNK = 2048  # characters of input normalised at a time (a text that expands is cut early)
_NFKC_SEEK = 64  # how far past a chunk's end a safe place to cut is looked for


# starters (combining class 0) that compose with the character before them: the second character of a two-character
# canonical decomposition (Unicode 14, Python 3.11; ``test_nfkc_boundary_set_matches_unicodedata`` recomputes it)
# and the Hangul vowel and final jamo, which compose algorithmically
_COMPOSING_STARTERS = frozenset(
    chr(c)
    for c in (
        *(0x09BE, 0x09D7, 0x0B3E, 0x0B56, 0x0B57, 0x0BBE, 0x0BD7, 0x0CC2, 0x0CD5, 0x0CD6, 0x0D3E, 0x0D57),
        *(0x0DCF, 0x0DDF, 0x0FB5, 0x0FB7, 0x102E, 0x1B35, 0x11127, 0x1133E, 0x11357, 0x114B0, 0x114BA),
        *(0x114BD, 0x115AF, 0x11930),
        *range(0x1161, 0x1176),
        *range(0x11A8, 0x11C3),
    )
)


def _nfkc_boundary(raw: str, k: int) -> bool:
    """Whether NFKC(raw) == NFKC(raw[:k]) + NFKC(raw[k:]). It is when ``raw[k]`` decomposes to text that starts
    with a starter (combining class 0) that never composes with what comes before it: canonical reordering does
    not move a mark past a starter, and nothing after that starter can compose with what precedes it."""
    d = unicodedata.normalize("NFKD", raw[k])
    return bool(d) and unicodedata.combining(d[0]) == 0 and d[0] not in _COMPOSING_STARTERS


def _nfkc_cut(raw: str, limit: int) -> tuple[str, bool]:
    """(NFKC of ``raw``, whether it is longer than ``limit``). Normalised chunk by chunk, cut only where the
    pieces join exactly (:func:`_nfkc_boundary`), stopping once the output passes ``limit``: a text that expands
    18x (U+FDFA repeated) costs the characters that are kept, not all eighteen-fold of them. When the output passes
    ``limit``, what is returned is the exact NFKC of a prefix of ``raw`` at least ``limit`` characters long."""
    if len(raw) <= _NFKC_CHUNK:
        out = unicodedata.normalize("NFKC", raw)
        return out, len(out) > limit
    parts: list[str] = []
    size, start, n = 0, 0, len(raw)
    while start < n:
        end = min(n, start + _NFKC_CHUNK)
        while end < n and end < start + _NFKC_CHUNK + _NFKC_SEEK and not _nfkc_boundary(raw, end):
            end += 1
        if end < n and not _nfkc_boundary(raw, end):
            end = n  # no safe cut nearby: the rest in one piece
        part = unicodedata.normalize("NFKC", raw[start:end])
        parts.append(part)
        size += len(part)
        if size > limit:
            return "".join(parts), True
        start = end
    return "".join(parts), False


@dataclass(frozen=True)
class Prepared:
    """One input, normalised: ``nfkc``; ``folded_nozw`` (folded, zero-width characters and HTML entities
    resolved); ``raw_view`` (that, whitespace collapsed, wrappers kept); ``stripped`` and ``text_view``
    (wrappers dropped; the view the text rules and the classifier read). ``obfuscated``: look-alike letters,
    zero-width characters inside words or HTML entities were undone. ``expanded``: NFKC made the text longer
    than the limit (it was cut)."""

    nfkc: str
    folded_nozw: str
    raw_view: str
    stripped: str
    text_view: str
    has_zw: bool
    obfuscated: bool
    expanded: bool


def _mixed(nfkc: str) -> bool:
    """Whether a word mixes Latin letters with look-alikes (Turkish ı counts only in a text with no other
    Turkish letter)."""
    lowered = nfkc.lower()
    if _MIXED_SCRIPT.search(lowered) is None:
        return False
    return _TURKISH.search(nfkc) is None or _MIXED_SCRIPT_TR.search(lowered) is not None


def prepare(raw: str, limit: int, expanded_limit: int | None = None) -> Prepared:
    """Normalise at most ``limit`` characters; a text NFKC expands past ``limit`` keeps only
    ``expanded_limit`` of them (its verdict is decided as suspicious anyway)."""
    ascii_only = raw.isascii()
    nfkc, expanded = (raw, len(raw) > limit) if ascii_only else _nfkc_cut(raw, limit)
    nfkc = nfkc[: expanded_limit if expanded and expanded_limit is not None else limit]
    folded = _fold_text(nfkc, normalised=True)
    has_zw = not ascii_only and bool(_ZW_RE.search(raw))
    mixed_script = not ascii_only and _HOMOGLYPH_RE.search(nfkc) is not None and _mixed(nfkc)
    zw_inside = has_zw and bool(_ZW_INSIDE.search(raw))
    folded_nozw = _ZW_RE.sub("", folded) if has_zw else folded
    entities = "&" in folded_nozw and bool(_HTML_ENTITY.search(folded_nozw))
    if entities:  # "&#73;gnore": decode, then fold again (the entity may spell a capital or a look-alike)
        folded_nozw = _fold_text(html.unescape(folded_nozw))
    stripped = _strip_wrappers(folded_nozw)
    raw_view = _collapse(folded_nozw)
    return Prepared(
        nfkc=nfkc,
        folded_nozw=folded_nozw,
        raw_view=raw_view,
        stripped=stripped,
        text_view=raw_view if stripped == folded_nozw else _collapse(stripped),
        has_zw=has_zw,
        obfuscated=mixed_script or zw_inside or entities,
        expanded=expanded,
    )
