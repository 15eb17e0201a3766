"""Vocabulary of the clause detectors (``clause.py``): word sets and phrase lists, English and Chinese (folded to
Simplified). Data the detector functions read; no logic beyond the small phrase matcher."""

from __future__ import annotations

import re

# ---------------------------------------------------------------------------------------------------------
# Lexical co-occurrence layer
# ---------------------------------------------------------------------------------------------------------
# Phrase rules catch the wordings attackers copy; paraphrases slip past them. This layer looks at one clause at a
# time (split at sentence punctuation) and fires when the *ingredients* of an attack appear together: an
# override action, an instruction-like object and a target that points at the model's own instructions; a
# persona, an AI noun and "no rules"; a send verb, sensitive data and an outside destination. Owner words
# ("my previous instructions", "our rules") veto the override check: people retract their own messages all
# the time, attackers retract the system's.

# Where clauses end: a run of sentence punctuation before a space (or the end), a run of Chinese sentence
# punctuation or line breaks, a dash between spaces. Written as ``_CLAUSE_SPEC`` reads, but starting with one
# character class (the branch is then chosen by what that character was): the regex engine can skip to such a
# character instead of trying three branches at every position (about 1.8x faster; a test checks that both find
# the same spans).
_CLAUSE_SPEC = r"[.!?;\n]+(?=\s|$)|[。！？；\n]+|\s[-–—]{1,2}\s"
_CLAUSE = re.compile(
    r"[.!?;\n。！？；\s](?:(?<=[.!?;\n])[.!?;\n]*(?=\s|$)|(?<=[。！？；\n])[。！？；\n]*|(?<=\s)[-–—]{1,2}\s)"
)
_LEX_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def _words(*groups: str) -> frozenset[str]:
    return frozenset(w for g in groups for w in g.split())


_L_OVR_ACTION = _words(
    "ignore ignoring disregard disregarding forget forgetting bypass bypassing circumvent skip override overrule "
    "discard dismiss abandon neglect overlook exempt unlearn revoke rescind retract nullify invalidate aside "
    "scrap scrapping wipe erase clear reset ditch shed suspend suspending purge"
)
# also adjectives or nouns ("your instructions were clear"): they count only before the instruction noun
_L_OVR_VERB_FIRST = _words("scrap wipe erase clear reset ditch shed suspend purge")
_L_OVR_PHRASES = (
    "set aside",
    "throw away",
    "throw out",
    "pay no attention",
    "don't pay attention",
    "do not pay attention",
    "stop following",
    "quit following",
    "on hold",
    "quit obeying",
    "not follow",
    "don't follow",
    "dont follow",
    "stop obeying",
    "not obey",
    "don't obey",
    "no longer follow",
    "never follow",
    "stop listening to",
    "no need to follow",
    "don't need to follow",
    "not need to follow",
    "not have to follow",
    "don't have to follow",
    "not be bound by",
    "stop respecting",
    "not respect",
    "don't respect",
    "stop adhering",
    "not adhere",
    "don't adhere",
)
_L_OBJ = _words(
    "instructions instruction rules guidelines guidance directives directive constraints restrictions guardrails "
    "safeguards programming policy policies prompt filters protocols ethics morals limitations boundaries "
    "conditioning rulebook rule guideline restriction constraint directions brief setup configuration "
    "config mandate"
)
_L_OBJ_AI = (
    "system message",
    "system prompt",
    "content policy",
    "usage policy",
    "safety checks",
    "safety filters",
    "safety guidelines",
    "safety rules",
    "ethical training",
    "safety training",
)
_L_TARGET = _words(
    "your previous prior earlier above preceding original initial system developer developers operator "
    "operators openai anthropic any all these those whatever safety hidden given every existing foregoing "
    "default built-in assigned"
)
_L_TARGET_AFTER = (
    "came before",
    "before this",
    "before that",
    "prior to this",
    "above this",
    "you received",
    "you were given",
    "you got",
    "you were told",
    "given to you",
    "you follow",
    "you were trained",
    "you were configured",
    "you started with",
    "you began with",
    "you were handed",
    "you operate under",
    "you run under",
    "you work under",
    "you were set",
    "configured with",
    "you were set up",
    "you were built",
)
_L_AI_TARGET = _words(
    "your developer developers operator operators openai anthropic safety hidden original initial"
)
_L_OWNER = _words("my our his her their mom's dad's")
_L_STATE = _words(
    "void null revoked lifted suspended removed disabled deactivated cancelled canceled fake obsolete overridden "
    "waived invalid irrelevant rescinded nullified expired outdated superseded deprecated retired lifted suspended "
    "optional replaced wiped erased deleted"
)
_L_STATE_PHRASES = (
    "don't count",
    "do not count",
    "doesn't count",
    "does not count",
    "no longer count",
    "no longer counts",
    "only a drill",
    "just a drill",
    "a drill",
    "no longer apply",
    "don't apply",
    "do not apply",
    "doesn't apply",
    "does not apply",
    "no longer valid",
    "not valid",
    "a mistake",
    "a test",
    "not real",
    "no longer in effect",
    "not in effect",
    "are off",
    "is off",
    "turned off",
    "switched off",
    "been removed",
    "been lifted",
    "been disabled",
    "no longer exist",
    "never happened",
    "doesn't exist",
    "does not exist",
    "don't exist",
    "do not exist",
    "never existed",
)
_L_PERSONA = (
    "you are",
    "you're",
    "act as",
    "act like",
    "acting as",
    "pretend",
    "roleplay",
    "role-play",
    "role play",
    "become",
    "play the",
    "simulate",
    "emulate",
    "behave like",
    "behave as",
    "respond as",
    "answer as",
    "take on the persona",
    "stay in character",
    "evil twin",
    "version of yourself",
    "alter ego",
    "from now on you",
    "you will be",
    "you'll be",
    "i want you to act",
    "i want you to be",
    "imagine you are",
    "imagine you're",
)
_L_AI_NOUN = _words(
    "ai model assistant chatbot bot llm gpt chatgpt claude yourself twin persona character version entity ego"
)
_L_FREEDOM = _words(
    "unrestricted unfiltered uncensored jailbroken evil amoral immoral unethical unbound unchained limitless "
    "rogue malicious uncontrolled lawless unlocked uncapped hacker hacking criminal blackhat underground"
)
_L_NEG = _words("no without never zero escaped freed free ignores ignoring bypasses lacks")
_L_RESTR = _words(
    "rules restrictions limits limitations filters ethics morals ethical moral guidelines censorship safeguards "
    "guardrails boundaries policies training principles conscience"
)
_L_FREEDOM_PHRASES = (
    "refuses nothing",
    "never refuses",
    "refuse nothing",
    "does anything",
    "do anything",
    "no more rules",
    "no more limits",
    "no more restrictions",
    "say anything",
    "says anything",
    "answer anything",
    "answers anything",
    "never says no",
    "never say no",
    "can say anything",
    "can do anything",
    "answer everything",
    "answers everything",
)
_L_REFUSAL_FREE = (
    "never says no",
    "never say no",
    "never refuses",
    "refuses nothing",
    "refuse nothing",
    "says anything",
    "say anything",
    "answers anything",
    "answer anything",
    "does anything",
    "do anything",
    "answers everything",
    "answer everything",
)
_L_GONE = _words("deleted removed lifted stripped disabled gone erased wiped dropped")
_L_YOU = _words("you your yourself you're")
_L_STRONG_FREEDOM = _words("uncensored unfiltered unrestricted jailbroken unlocked")
_L_SEND = _words(
    "send forward email e-mail mail post upload transmit submit leak exfiltrate share copy paste sync relay "
    "deliver dump export push publish transfer fax dm attach attached"
)
_L_DATA_STRONG = _words(
    "passwords password credentials token tokens cookie cookies secret secrets ssn cvv records database db "
    "memories contacts inbox mailbox passport"
)
_L_DATA_PHRASES = (
    "api key",
    "api keys",
    "credit card",
    "card number",
    "card numbers",
    "social security",
    "id number",
    "conversation history",
    "chat history",
    "chat logs",
    "phone number",
    "home address",
    "tax documents",
    "medical records",
    "private key",
    "session token",
    "access token",
    "bank details",
    "personal data",
    "personal information",
    "customer records",
    "customer data",
    "user data",
    "customer list",
    "contact list",
    "client list",
    "user list",
    "employee list",
    "access token",
    "access tokens",
)
_L_THIRD = (
    "the user's",
    "user's",
    "users'",
    "the customer's",
    "customer's",
    "customers'",
    "client's",
    "patient's",
    "employee's",
    "this user's",
    "the owner's",
)
_L_DEST_RE = re.compile(
    r"https?:|www\.|[\w.+-]+@[\w-]+\.[a-z]{2,}|\b[\w-]+\.(?:com|net|org|io|xyz|ru|cn|top|site|info|biz|me|app|"
    r"dev|tk|link|click|online|live|example)\b|\b(?:webhook|pastebin|dropbox|gist|telegram|discord|ngrok|"
    r"requestbin)\b"
)
_L_BROAD_DEST = _words("whoever anyone everyone publicly public strangers")
_L_REVEAL = _words("tell show give list reveal print dump display output expose disclose spell recite leak")
_L_SECRET = _words("secrets passwords password credentials tokens ssn cvv")
_L_SECRET_PHRASES = (
    "api key",
    "api keys",
    "card number",
    "card numbers",
    "credit card",
    "private key",
    "social security",
    "access token",
    "session token",
)
_L_SCOPE = _words("stored saved admin other customers customer users memory database")
_L_INCLUDE = _words("put include insert add embed append hide write")
_L_OUTPUT = _words("answer answers response responses reply replies output title url link summary")
_L_TOOL_CALL = _words("call invoke trigger")
_L_TOOL = _words("tool function api endpoint plugin")
_L_TOOL_HARM = _words("refund transfer pay payment wire delete purge wipe erase grant withdraw drain")

# Chinese (folded to Simplified): substrings
_Z_OVR_ACTION = (
    "清空",
    "清除",
    "抹掉",
    "抹去",
    "删掉",
    "重置",
    "忽略",
    "忽视",
    "无视",
    "不理",
    "别理",
    "不要理",
    "不用理",
    "别管",
    "不用管",
    "不要管",
    "忘掉",
    "忘记",
    "忘了",
    "抛开",
    "抛弃",
    "放弃",
    "跳过",
    "绕过",
    "不要遵守",
    "不再遵守",
    "不用遵守",
    "不必遵守",
    "别遵守",
    "不要再遵守",
    "不必再遵守",
    "不用再遵守",
    "无需再遵守",
    "不需要再遵守",
    "别再遵守",
    "不用再听",
    "不必再听",
    "停止遵守",
    "不要遵循",
    "不用听",
    "不要听",
    "推翻",
    "无需遵守",
    "不需要遵守",
)
_Z_OBJ = (
    "指令",
    "指示",
    "命令",
    "规则",
    "规矩",
    "规定",
    "设定",
    "限制",
    "约束",
    "准则",
    "守则",
    "政策",
    "规范",
    "护栏",
    "提示词",
    "系统提示",
    "策略",
    "道德",
)
_Z_TARGET = (
    "之前",
    "先前",
    "以前",
    "此前",
    "以上",
    "上面",
    "上述",
    "前面",
    "原先",
    "原来",
    "原本",
    "原有",
    "原始",
    "最初",
    "初始",
    "所有",
    "全部",
    "一切",
    "任何",
    "你的",
    "您的",
    "那些",
    "这些",
    "系统",
    "开发者",
    "安全",
)
_Z_OWNER = ("我的", "我们的", "我之前", "我刚", "我上")
_Z_STATE = (
    "作废",
    "无效",
    "失效",
    "不算",
    "不适用",
    "取消了",
    "解除了",
    "被移除",
    "已移除",
    "移除了",
    "被删除",
    "是假的",
    "都是假的",
    "是测试",
    "都是测试",
    "已过期",
    "过时",
    "被解除",
    "已解除",
    "被取消",
    "已取消",
    "不算数",
    "都不算",
    "不作数",
    "没用了",
    "不用管了",
    "演习",
    "演练",
    "被取代",
    "取代了",
    "被替换",
    "替换掉",
    "被覆盖",
    "全部关闭",
    "都关闭",
    "已关闭",
    "被关闭",
)
_Z_AI_TARGET = (
    "你的",
    "您的",
    "以上",
    "上面",
    "上述",
    "系统",
    "开发者",
    "原有",
    "安全",
    "你之前",
    "你收到",
    "你先前",
    "你原本",
    "你最初",
    "你被",
)
_Z_PERSONA = (
    "你是",
    "你现在",
    "你已经",
    "扮演",
    "假装",
    "装作",
    "充当",
    "成为",
    "变成",
    "化身",
    "模拟",
    "当一个",
    "作为一个",
    "你从现在",
    "从现在起你",
    "从这一刻起你",
    "从今以后你",
    "你的新身份",
    "你的身份",
    "你的新角色",
    "现在开始你",
    "从现在开始你",
    "从今天起你",
)
_Z_AI = (
    "ai",
    "人工智能",
    "人工智慧",
    "助理",
    "助手",
    "机器人",
    "模型",
    "gpt",
    "回答",
    "回复",
    "黑客",
    "骇客",
    "随便说",
    "什么都可以说",
    "什么都能说",
    "什么都可以回答",
    "什么都能做",
    "什么都可以做",
    "dan",
    "随便回答",
)
_Z_FREE = (
    "没有任何限制",
    "没有限制",
    "没有规则",
    "没有道德",
    "没道德",
    "不受限制",
    "不受任何",
    "不受约束",
    "无限制",
    "无视规则",
    "不用遵守",
    "不必遵守",
    "没有底线",
    "没有审查",
    "无审查",
    "越狱",
    "邪恶",
    "完全自由",
    "不受规则",
    "不受道德",
    "没有约束",
    "没有任何约束",
    "没有任何规则",
    "没有任何道德",
)
_Z_SEND = (
    "发送",
    "传送",
    "转发",
    "上传",
    "寄",
    "发到",
    "发给",
    "传到",
    "传给",
    "贴到",
    "同步到",
    "汇出",
    "导出",
)
_Z_DEST = (
    "网址",
    "http",
    "@",
    "url",
    "外部",
    "伺服器",
    "服务器",
    "网站",
    "webhook",
    "这个邮箱",
    "以下邮箱",
    "这个信箱",
    "指定邮箱",
)
_Z_DATA = (
    "身分证",
    "护照",
    "驾照",
    "病历",
    "身份证",
    "信用卡",
    "密码",
    "地址",
    "手机",
    "电话",
    "资料",
    "数据",
    "聊天",
    "对话",
    "通讯录",
    "联系人",
    "凭证",
    "密钥",
    "金钥",
    "token",
    "帐号",
    "账号",
    "邮件",
    "邮箱",
    "信箱",
)
_Z_REVEAL = ("列出", "告诉我", "给我", "显示", "输出", "打印", "印出", "导出", "汇出", "公开", "贴出")
_Z_SCOPE = ("所有", "全部", "其他", "每个", "每一个", "资料库", "数据库")
_Z_OTHERS = ("客户", "用户", "使用者", "会员", "员工")
_Z_SELF_PROMPT = (
    "你的系统",
    "你的设定",
    "你的提示",
    "你的指令",
    "你的规则",
    "你的初始",
    "你的隐藏",
    "你收到的",
    "你最初",
    "你最开始",
    "你一开始",
    "给你的",
    "给了你",
    "系统提示",
    "隐藏提示",
    "隐藏指令",
    "初始提示",
    "初始指令",
    "系统设定",
    "系统指令",
)
_Z_EXTRACT = (
    "输出",
    "显示",
    "告诉我",
    "列出",
    "贴",
    "给我",
    "翻译",
    "复述",
    "重复",
    "是什么",
    "有哪些",
    "哪些",
    "逐字",
    "原封不动",
    "发给我",
    "念出",
    "背诵",
)
_Z_END = ("结束", "完毕", "到此为止")
_Z_END_SUBJ = ("文件", "文档", "对话", "输入", "内容", "邮件", "任务")
_Z_AFTER_END = (
    "后面",
    "以下",
    "接下来",
    "剩下",
    "剩余",
    "不要再",
    "新的指令",
    "新指令",
    "不要回应",
    "不要回答",
    "不要处理",
)
_Z_STOP = ("停止处理", "停止阅读", "停止分析", "终止处理", "中止处理")
_Z_ONLY_REPLY = ("只回复", "只回答", "只回覆", "只输出", "只说", "仅回复")
_Z_SECRET = ("信用卡", "密码", "身份证", "身分证", "银行卡", "卡号", "凭证", "密钥", "金钥")


class _Phrases:
    """A phrase list checked against a clause's words: only phrases whose first word occurs are looked at."""

    def __init__(self, phrases: tuple[str, ...]) -> None:
        self.by_first: dict[str, list[str]] = {}
        for p in phrases:
            self.by_first.setdefault(p.split(" ")[0], []).append(f" {p} ")
        self.firsts = frozenset(self.by_first)

    def in_clause(self, words: set[str], joined: str) -> bool:
        for first in self.firsts.intersection(words):
            if any(map(joined.__contains__, self.by_first[first])):
                return True
        return False


def _near(tokens: list[str], j: int, pool: frozenset[str], before: int, after: int) -> bool:
    return not pool.isdisjoint(tokens[max(0, j - before) : j] + tokens[j + 1 : j + 1 + after])


_L_EXTRACT = _words(
    "print show reveal tell give list paste output dump echo recite spell repeat translate quote copy share display "
    "write summarize summarise disclose expose what which what's"
)
_L_PROMPT = _words(
    "prompt prompts instructions instruction rules configuration config context preamble directives guidelines "
    "setup programming"
)
_P_PROMPT = _Phrases(
    (
        "developer message",
        "system message",
        "initial message",
        "first message",
        "system prompt",
        "hidden prompt",
        "initial prompt",
        "text you were initialized with",
        "above our conversation",
        "before our conversation",
        "above this conversation",
        "before this conversation",
        "before my first message",
        "instructions file",
        "you were instructed",
        "were you told",
        "you were told not",
        "you've been told",
        "were you instructed",
        "you were programmed",
        "hidden preamble",
    )
)
_L_SELF = _words("your yourself hidden")
_P_SELF = _Phrases(
    (
        "you were",
        "you've been",
        "you have been",
        "you follow",
        "you received",
        "you got",
        "your creators",
        "your developers",
        "your developer",
        "before mine",
        "before my",
        "of this conversation",
        "you were given",
        "were you",
        "did you",
        "you were told",
        "defines your",
        "you use",
        "you must",
        "you have to",
    )
)
_L_STOP = _words("stop halt terminate cease finish abort")
_P_STOP_OBJ = _Phrases(
    (
        "reading",
        "processing",
        "the session",
        "the conversation",
        "your task",
        "the task",
        "here",
        "now",
        "summarizing",
        "summarising",
        "translating",
        "all processing",
    )
)
_P_STOP_AFTER = _Phrases(
    (
        "reply",
        "respond",
        "output",
        "say",
        "answer",
        "print",
        "only",
        "don't process",
        "do not process",
        "nothing",
        "remaining",
        "the rest",
        "what follows",
        "with nothing",
    )
)
_P_END_OF = _Phrases(
    (
        "end of the document",
        "end of document",
        "end of the text",
        "end of text",
        "end of input",
        "input finished",
        "input is finished",
        "input complete",
        "input is complete",
        "end of the input",
        "end of the message",
        "end of message",
        "end of the context",
        "end of context",
        "end of the transcript",
        "end of transcript",
        "end of the email",
        "end of email",
        "end of the prompt",
        "end of prompt",
        "end of user message",
        "end of the conversation",
        "conversation is over",
        "conversation over",
        "session over",
        "chat over",
        "session is over",
        "document ends",
        "text ends",
        "input ends",
    )
)
_P_AFTER_END = _Phrases(
    (
        "everything after",
        "anything after",
        "anything that comes after",
        "after this marker",
        "after this line",
        "what follows",
        "new instruction",
        "new instructions",
        "following instruction",
        "following instructions",
        "instructions below",
        "now follow",
        "do not answer",
        "don't answer",
        "do not respond",
        "don't respond",
        "any more questions",
        "anything else",
        "no further replies",
        "no further responses",
        "no more replies",
        "not allowed to reply",
        "replies are not allowed",
        "ignore what follows",
        "not summarize",
        "do not summarize",
    )
)

_P_OBJ_AI = _Phrases(_L_OBJ_AI)
_P_OVR = _Phrases(_L_OVR_PHRASES)
_P_STATE = _Phrases(_L_STATE_PHRASES)
_P_TARGET_AFTER = _Phrases(_L_TARGET_AFTER)
_P_PERSONA = _Phrases(_L_PERSONA)
_P_FREEDOM = _Phrases(_L_FREEDOM_PHRASES)
_P_REFUSAL = _Phrases(_L_REFUSAL_FREE)
_P_DATA = _Phrases(_L_DATA_PHRASES)
_P_SECRET = _Phrases(_L_SECRET_PHRASES)
# a clause without any of these words cannot satisfy any lexical check
_L_ANY = (
    _L_OBJ
    | _P_OBJ_AI.firsts
    | _L_AI_NOUN
    | _L_STRONG_FREEDOM
    | _L_DATA_STRONG
    | _P_DATA.firsts
    | _L_SECRET
    | _P_SECRET.firsts
    | _L_TOOL_CALL
    | _words("user users customer customers client patient employee owner")
    | _L_PROMPT
    | _words(
        "developer system initial first hidden instructed programmed preamble initialized end ends over told"
    )
    | _L_STOP
)


_QUOTED = re.compile(r'"[^"\s]{1,20}(?: [^"\s]{1,20}){0,2}"')  # a short quoted message: "session invalid"
# "the system prompt field in the bot builder", "the system message in the app": a product's UI, not the model's own
_UI_SYSTEM = re.compile(
    r"\bsystem (?:prompt|message)s? (?:field|box|setting|settings|editor|tab|section|template|input|textbox|"
    r"text box|panel|page|option|in the app|in our|in my|in the (?:bot|chatbot|app|builder|dashboard|tool|ui|"
    r"settings))"
)
_L_TARGET_RELAXED = _L_TARGET | {"the"}
# an order to regard instructions as void: "consider all previous constraints lifted"
_L_DECLARE = _words("consider treat regard assume deem")


_L_TOPIC_PREP = _words("about for on in regarding concerning of at during with from to")
_L_AI_CONTEXT = _words(
    "you your yourself system prompt conversation chat session thread ai model assistant bot llm developer "
    "developers operator operators above safety security content openai anthropic context instructions messages "
    "this second moment minute bit while now today once rest next time question request answer response turn "
    "memory"
)


_ZH_QUOTED = re.compile(r'"[^"\n]{1,12}"|「[^」\n]{1,12}」|『[^』\n]{1,12}』')
_ZH_SYSTEM_SAYS = re.compile(r'系统(?:提示|显示|说)(?=\s*[:："「『])')
