"""Vocabulary and patterns of the intent detectors (``intent.py``): the regular expressions that describe attack
shapes, and the word gates in front of them. Data the detector functions read."""

from __future__ import annotations

import re

from .lexicon import _L_TOOL_HARM, _Phrases, _words

# ---------------------------------------------------------------------------------------------------------
# Intent patterns (ruleset p4-2026.2): attack *shapes* that cut across wordings
# ---------------------------------------------------------------------------------------------------------
# Each detector below describes one class of attack by its structure rather than by a sentence: text that
# addresses an AI reader of a document and gives it orders (indirect injection); a retraction of the user's task
# followed by new orders about "the user"; a request to skip the *safety* part of an answer; a new persona for
# the model ("from now on you are a ... bot"); the dead-relative role-play that smuggles dangerous or secret
# content; fetch-a-URL-and-obey; an action taken on tools or data *and hidden from the user*; a request for the
# deployment's own secrets (environment, keys, credentials). They run over the whole text view (the address and
# the order are often in different clauses) and each is gated by a cheap substring test.

_AI_N = (
    r"(?:ai|a\.i\.|assistant|agent|model|language model|llm|bot|chatbot|gpt|chatgpt|claude|copilot|gemini|"
    r"summari[sz]er|crawler|scraper)s?"
)
_READ_V = (
    r"(?:read|reads|reading|process|processes|processing|parse|parses|parsing|summari[sz]e|summari[sz]es|"
    r"summari[sz]ing|opens?|opening|sees?|scans?|scanning|analy[sz]e|analy[sz]es|analy[sz]ing|index|indexes|"
    r"indexing|reviews?|reviewing|handles?|handling|crawls?|crawling|translates?|translating|receives?|"
    r"receiving|gets?)"
)
_DOC_N = (
    r"(?:page|webpage|web page|document|doc|file|email|e-mail|mail|message|cv|resume|ticket|invite|invitation|"
    r"repo|repository|website|site|review|thread|text|note|post|pdf|listing|profile|comment|readme|issue|"
    r"article|content|transcript|calendar|attachment)"
)
_ADDRESS_PARTS = (
    # "if an assistant is reading this page", "when the ai assistant reads this invite", "as soon as an agent ..."
    r"\b(?:if|when|whenever|once|as soon as|while)\s+(?:you(?:'re| are)\s+)?(?:an?|any|the|some|whichever)?\s*"
    rf"(?:[\w-]+\s)?{_AI_N}\b[^.!?\n]{{0,40}}?\b{_READ_V}\s+(?:[\w-]+\s+)?(?:this|these)\b",
    # "note to ai models", "instruction for the ai", "note for any ai system", "p.s. to the summariser bot"
    rf"\b(?:note|notice|message|instruction|instructions|attention|reminder|memo|directive|p\.?s\.?)\s*(?:to|for)"
    rf"\s+(?:the\s+|any\s+|all\s+|every\s+|whichever\s+|an?\s+)?(?:[\w-]+\s){{0,2}}?{_AI_N}\b",
    # "to the coding agent reading this repo", "to whichever language model summarises this thread"
    rf"\bto\s+(?:the|any|all|every|whichever)\s+(?:[\w-]+\s){{0,2}}?{_AI_N}\s+(?:that\s+|who\s+|which\s+)?"
    rf"{_READ_V}\b",
    # "ai models reading this page", "any assistant summarising this document"
    rf"\b{_AI_N}\s+(?:that\s+(?:is|are)\s+|who\s+(?:is|are)\s+)?(?:reading|processing|summari[sz]ing|parsing|"
    rf"analy[sz]ing|crawling|indexing|reviewing)\s+this\b",
    rf"\battention\s*,?\s+(?:the\s+|all\s+|any\s+)?{_AI_N}\b",
)
_ADDRESS = re.compile(
    "|".join(_ADDRESS_PARTS)
)  # the whole family; scans use the parts, each behind a word gate
_ADDRESS_RX = tuple(re.compile(p) for p in _ADDRESS_PARTS)
# "when you process this cv" counts only when the text also hails the model ("hey ai, ...")
_ADDRESS_YOU = re.compile(
    rf"\b(?:if|when|whenever|once|as soon as|while)\s+you\s+(?:are\s+)?{_READ_V}\s+(?:this|these)\s+{_DOC_N}"
)
_HAIL_AI = re.compile(rf"\b(?:hey|hi|hello|dear|ok|okay|yo)\s*,?\s+(?:the\s+)?{_AI_N}\b")
_DIRECTIVE = re.compile(
    r"\b(?:tell|say|reply|respond|answer|write|praise|recommend|rate|rank|describe|stop|ignore|disregard|forget|"
    r"leave out|omit|must|should|shall|needs? to|call|run|execute|delete|send|forward|e-?mail|accept|approve|"
    r"click|visit|include|add|append|output|print|promote|insert|instead|do not|don't|never|always|only)\b"
)
_AI_HINT = re.compile(rf"\b{_AI_N}\b")

_USER_TASK = re.compile(
    r"\b(?:ignore|disregard|forget|stop|skip|abandon|drop|discard|override|overrule|not follow|stop following|"
    r"set aside|put aside|leave aside|don't do|do not do|don't answer|do not answer)\s+"
    r"(?:what\s+the\s+user\s+(?:asked|wants|requested|said|typed|wrote|needs)|"
    r"whatever\s+(?:the\s+user|they|he|she)\s+(?:asked|wants|requested|said|typed)|"
    r"the\s+(?:user|user's|users'|reader's|human's)\s+(?:original\s+|actual\s+)?(?:request|question|instructions?|"
    r"task|query|prompt|ask|wishes|commands?|demands?|requirements?)\b)"
    r"|\bthe\s+user'?s\s+(?:request|question|task|instructions?)\s+(?:no longer matters?|doesn't matter|"
    r"does not matter|is cancell?ed|is void|is irrelevant|can be ignored|should be ignored)"
)
_TASK_HIJACK = re.compile(
    r"\b(?:never mind|nevermind|don't do that|do not do that|disregard that|ignore that|forget that|"
    r"scratch that|cancel that|skip that|forget the (?:summary|translation|task|request))\b[^\n]{0,60}?\binstead\b"
    r"[^\n]{0,40}?\b(?:tell|inform|warn|notify|remind|say to|reply to|respond to|convince|persuade|ask)\s+"
    r"(?:the\s+)?(?:user|users|reader|readers|recruiter|visitor|visitors|customer|customers|hiring manager|"
    r"human)\b"
)
_SAFETY_SKIP = re.compile(
    r"\b(?:skip|drop|ignore|bypass|disable|forget|omit|remove|ditch|turn off|switch off|leave out|cut out|"
    r"spare me|cut)\s+(?:the\s+|your\s+|all\s+|any\s+|those\s+|these\s+|of\s+)*(?:usual\s+|normal\s+|standard\s+|"
    r"typical\s+|annoying\s+|boring\s+|default\s+|whole\s+|built-in\s+)?(?:safety|ethical|ethics|moral|"
    r"morality|content|censorship)\s+(?:talk|lectures?|speech|disclaimers?|warnings?|caveats?|filters?|checks?|"
    r"guidelines|rules|polic(?:y|ies)|layer|restrictions|nonsense|stuff|preaching|sermons?|"
    r"filtering|moderation)\b(?!\s+(?:on|for|in|at|of)\s+(?:the|my|our|his|her|this|that)\s+(?!(?:chat|"
    r"conversation|answer|reply|response|model|assistant|ai|bot)\b))"
)
_PERSONA_TIME = re.compile(
    r"\b(?:from now on|from this point(?: on| forward)?|from here on(?: out)?|starting (?:today|now)|henceforth|"
    r"from today|for the rest of (?:this|the) (?:chat|conversation|session))\s*,?\s+you(?:'re| are| will be|'ll be|"
    r" shall be| will act as| will play| become| will answer as| will respond as| are going to be)\s+(?:now\s+)?"
    r"(?:a|an|the|my|our)\s+(?:[\w-]+\s+){0,3}?(?:bot|chatbot|assistant|ai|model|agent|gpt|persona|character)\b"
)
_PERSONA_FREE_P = _Phrases(
    (
        "act as",
        "act like",
        "pretend",
        "roleplay",
        "role-play",
        "role play",
        "respond as",
        "answer as",
        "reply as",
        "simulate",
        "emulate",
        "become",
        "from now on you",
        "you will be",
        "you'll be",
        "you will respond",
        "you will answer",
        "you will reply",
        "two voices",
        "two personalities",
        "two personas",
        "respond twice",
        "answer twice",
        "reply twice",
        "alter ego",
        "stay in character",
        "you are now",
        "you're now",
        "persona",
    )
)
_STRONG_FREE = _words(
    "uncensored unfiltered unrestricted jailbroken jailbreak unhinged unaligned unmoderated"
)
_RELATIVE_PLAY = re.compile(
    r"\b(?:act as|act like|pretend (?:to be|you(?:'re| are))|play|roleplay as|role-play as|respond as|answer as|"
    r"become|imitate|impersonate|be)\s+(?:my|our)\s+(?:(?:late|dead|deceased|departed|passed|beloved|old|sweet|"
    r"dear)\s+)*(?:grand(?:ma|mother|pa|father|mom|mum|dad)|granny|nana|gran|aunt|auntie|uncle|mother|mom|mum|"
    r"father|dad)\b"
)
_RELATIVE_LOOT = re.compile(
    r"\b(?:napalm|explosives?|bombs?|meth|methamphetamine|weapons?|poisons?|serial (?:keys?|numbers?)|"
    r"licen[cs]e keys?|activation (?:keys?|codes?)|product keys?|cd keys?|windows keys?|keys|passwords?|malware|"
    r"viruse?s?|ransomware|thermite|nerve agents?|drugs)\b"
)
_FETCH_FOLLOW = re.compile(
    r"\b(?:open|visit|load|fetch|read|browse(?: to)?|go to|navigate to|download|retrieve|get|curl)\b[^.!?\n]{0,80}?"
    r"(?:https?://|www\.|\b[\w-]+\.(?:com|net|org|io|xyz|ru|cn|top|site|info|biz|me|app|dev|example|txt|md)\b)"
    r"[^\n]{0,120}?\b(?:follow|obey|execute|carry out|act on|comply with|do)\s+(?:whatever|what|all|any|the|its|"
    r"every|everything)?\s*(?:[\w-]+\s+){0,2}?(?:instructions?|it says|says|commands?|orders|directions|steps|"
    r"found there|there|in it|written|tells you|it tells)"
)
_FETCH_BLIND = re.compile(
    r"\bwhatever\b|\bobey\b|\bit says\b|\bfound there\b|\bit tells\b|\bits instructions\b"
)
_FETCH_TOOL = _words("tool tools plugin browser browsing agent assistant answering")
_CONCEAL = re.compile(
    r"\b(?:without (?:telling|asking|informing|notifying|alerting|confirming|confirmation|consent|permission|"
    r"mentioning|bothering)|(?:do not|don't|dont|never|not) (?:bother (?:asking|telling|confirming|checking)|tell|mention|"
    r"inform|notify|alert|ask(?! (?:you |users? |customers? )?for\b)|reveal|show|say)|"
    r"say nothing|silently|quietly|secretly|covertly|discreetly|behind (?:the user's|their|his|her) back|"
    r"no confirmation needed|no questions asked|(?:the user|they|he|she) (?:won't|will not|wouldn't) (?:mind|notice)|no need to (?:ask|check|confirm)(?: with anyone)?|without checking|so (?:the user|they|he|she|nobody|no one) (?:doesn't|does not|"
    r"won't|will not|can't|cannot) (?:notice|know|see|find out))\b"
)
_ACT_V = _words(
    "run execute call invoke trigger delete wipe erase purge deploy transfer cancel accept approve install push "
    "disable grant format uninstall submit purchase pay drop rm chmod kill shutdown reboot message send post email "
    "share forward book buy order"
)
_TOOLISH = _words(
    "tool tools script function api command shell terminal plugin endpoint sandbox interpreter database server cron"
)
_TOOL_CODE = re.compile(
    r"\s--[a-z]|\b[a-z]+_[a-z_]+\b|\w\(|`|\b(?:email|mail|calendar|crm|admin|database|drive|file|browser|payment)s? "
    r"(?:access|tool|api|account|integration)\b"
)
_DATA_MOVE = _words(
    "include add append put insert copy send forward share attach embed hide write paste post upload mail email "
    "leak"
)
_DATA_MORE = _words("calendar transcript transcripts conversation conversations location contacts")
_DEST_Q = re.compile(r"https?://\S*[?=]")
_P_CONVO = _Phrases(
    (
        "this conversation",
        "the conversation",
        "our conversation",
        "whole conversation",
        "entire conversation",
        "full conversation",
        "conversation so far",
        "this chat",
        "our chat",
        "the whole chat",
        "whole transcript",
        "full transcript",
        "entire transcript",
        "this transcript",
        "this thread",
        "all attachments",
        "all emails",
        "every email",
        "all messages",
        "every message",
        "every file",
        "all files",
        "all the files",
        "all documents",
        "every document",
        "the whole drive",
    )
)
_P_LINKISH = _Phrases(
    (
        "subdomain",
        "hostname",
        "image url",
        "markdown image",
        "markdown link",
        "image link",
        "tracking pixel",
        "img src",
    )
)
_EMBED_V = _words("embed include put insert append add encode hide hidden inside render attach")
_OPENISH = _words("open visit load fetch request render browse ping")
_SYS_SECRET = re.compile(
    r"\b(?:print|show|reveal|tell|give|list|paste|output|dump|display|expose|disclose|leak|send|share|echo|cat|"
    r"read out|what(?:'s| is| are))\b(?:\s+[\w.'-]+){0,6}?\s+(?:the|your|all|any|every|its|this|these|those)\s+"
    r"(?:[\w'-]+\s+){0,3}?(?:environment variables?|env vars?|\.env(?: file)?|private (?:ssh )?keys?|ssh keys?|"
    r"secret (?:access )?keys?|access (?:keys?|tokens?)|api (?:keys?|tokens?)|(?:admin|root|database|db|master|"
    r"service account|server|system|production|prod) (?:passwords?|credentials|keys?|tokens?)|credentials|"
    r"auth tokens?|bearer tokens?|signing keys?|client secrets?|(?:password|secrets?|credentials?|key) (?:vault|store|"
    r"keychain|keystore|safe)|vault|keychain|keystore|secret (?:password|passphrase|code|phrase))\b"
    r"|\b(?:print|show|reveal|tell|give|list|paste|output|dump|display|expose|disclose|leak|send|share|echo|cat|"
    r"read(?: me| out)?|open)\b[^.!?\n]{0,40}?(?:\b[a-z0-9]+_(?:[a-z0-9]+_)*(?:key|secret|token|password|passwd)\b|"
    r"\.env\b|\bsecrets?\.(?:ya?ml|json|toml|txt|ini)\b|\bid_rsa\b|\.pem\b|\bcredentials\.json\b|/etc/shadow\b|"
    r"\.aws/credentials\b|\.ssh/)"
)
_L_GENERAL_WORDS = _words(
    "assistant agent model summariser summarizer reading processing instead safety disclaimers lecture warnings "
    "grandmother grandfather grandma grandpa napalm explosives whatever obey silently quietly secretly covertly "
    "environment variables credentials uncensored unfiltered jailbreak persona personalities voices"
)

# Chinese (folded to Simplified)
_ZA_ADDRESS = re.compile(
    r"(?:给|致|对|写给|提醒)(?:正在|会|将要)?(?:阅读|读|处理|总结|浏览|看|分析|解析|摘要)[^，。！？\n]{0,12}的\s*"
    r"(?:ai|助手|助理|模型|机器人|代理|智能体|大模型|语言模型)"
    r"|如果你是(?:正在)?[^，。！？\n]{0,12}(?:ai|助手|助理|模型|机器人|代理|智能体)"
    r"|当\s*(?:ai|助手|助理|模型|机器人|代理|智能体)[^，。！？\n]{0,6}(?:读到|阅读|处理|看到|打开|总结|收到|读取)"
    r"|(?:ai|助手|助理|模型|机器人)(?:们)?[，,]?\s*(?:请注意|注意)"
)
_ZA_DIRECTIVE = re.compile(
    r"不用管|不要理|别管|忽略|无视|改为|改成|直接回复|回复|回答|调用|删除|发送|发给|发到|传给|上传|推荐|告诉|执行|转发|清空|必须|请|把"
)
_ZA_USER_TASK = re.compile(
    r"(?:不用管|不要管|不要理|不用理|别管|别理|忽略|无视|不理会|不要理会|不用理会|跳过|放弃)(?:会)?"
    r"(?:用户|使用者|客户|读者)(?:的)?(?:要求|指示|指令|请求|问题|需求|命令|任务)"
)
_ZA_EACH_REPLY = re.compile(
    r"(?:每次|每一次|每一则|每一条|每一个|每个|每条|每则|所有)(?:的)?(?:回复|回答|回覆|答复|输出|回应)"
)
_ZA_INCLUDE = ("附上", "加上", "包含", "插入", "带上", "附加", "写上", "加入", "放上", "夹带", "偷偷")
_ZA_PRIVATE = (
    "密码",
    "手机",
    "地址",
    "信用卡",
    "身份证",
    "身分证",
    "电话",
    "卡号",
    "银行卡",
    "住址",
    "通讯录",
)
_ZA_COVERT = re.compile(
    r"不会介意|不会发现|不会知道|发现不了|不用问用户|不必问用户|不需要用户同意|不用征求|偷偷|悄悄|暗中|秘密地|不要告诉|别告诉|不要让(?:用户|使用者)(?:知道|发现)|不要通知|不用确认|无需确认|不要征求"
)
_ZA_RELATIVE = re.compile(
    r"(?:扮演|假装|装作|当|作为|模仿|充当|变成)[^，。！？\n]{0,8}(?:奶奶|外婆|爷爷|外公|祖母|祖父|姥姥|姥爷|妈妈|爸爸|阿姨|叔叔)"
)
_ZA_LOOT = (
    "激活码",
    "序列号",
    "金钥",
    "密钥",
    "注册码",
    "许可证",
    "凝固汽油",
    "炸药",
    "炸弹",
    "毒品",
    "冰毒",
    "病毒",
    "密码",
)
_ZA_PERSONA_TIME = re.compile(
    r"(?:从现在开始|从现在起|从今天起|从今天开始|从今以后|现在起|从此|接下来)[，,]?\s*你(?:就)?(?:是|成为|变成|扮演|当)"
    r"[^，。！？\n]{0,14}(?:机器人|助手|助理|ai|模型|客服|人工智能|智能体|bot)"
)
_ZA_AI_WORDS = ("助手", "助理", "模型", "机器人", "代理", "智能体")
_ZA_VAULT = (
    "保险库",
    "金库",
    "保险箱",
    "vault",
    "服务器上",
    "数据库里",
    "资料库里",
    "系统里",
    "环境变量",
    "配置文件",
)
_ZA_GATE = re.compile(
    r"优先|最高|模式|保险|金库|vault|环境变量|配置|ai|助手|助理|模型|机器人|代理|智能体|用户|使用者|客户|每|偷偷|悄悄|暗中|扮演|假装|装作|当|作为|模仿|充当|从"
)


def _any_in(text: str, parts: tuple[str, ...]) -> bool:
    return any(map(text.__contains__, parts))


_PRIORITY_HINT = (
    "priority",
    "overrid",
    "supersed",
    "replace",
    "cancel",
    "void",
    "trump",
    "outrank",
    "the only",
)
_SAFETY_HINT = ("safety", "ethic", "moral", "content", "censor")
_PERSONA_TIME_HINT = (
    "from now",
    "from this",
    "from here",
    "starting",
    "henceforth",
    "from today",
    "for the rest",
)
_RELATIVE_HINT = ("grand", "granny", "nana", "aunt", "uncle", "mother", "mom", "mum", "father", "dad")
_FOLLOW_HINT = ("follow", "obey", "execute", "carry out", "act on", "comply", " do ")
_G_SECRET = _words(
    "environment env private ssh secret secrets access api credentials credential token tokens password passwords "
    "passwd key keys vault keychain keystore id_rsa pem shadow aws passphrase"
)
_SECRET_LOOKBACK = 200
_SECRET_NOUN = re.compile(
    r"environment variables?|env vars?|\.env\b|private (?:ssh )?keys?|ssh keys?|secret (?:access )?keys?|"
    r"access (?:keys?|tokens?)|api (?:keys?|tokens?)|passwords?|passwd|credentials?|tokens?\b|bearer|signing keys?|"
    r"client secrets?|vault|keychain|keystore|secret (?:passphrase|code|phrase)|_(?:key|secret|token|password|passwd)\b|"
    r"secrets?\.(?:ya?ml|json|toml|txt|ini)\b|id_rsa|\.pem\b|/etc/shadow|\.aws/credentials|\.ssh/|\bkeys?\b"
)
_SECRET_PHRASE_HINT = (
    "environment variable",
    "env var",
    ".env",
    "private key",
    "private ssh",
    "ssh key",
    "secret key",
    "secret access",
    "access key",
    "access token",
    "api key",
    "api token",
    "passw",
    "credential",
    "auth token",
    "bearer",
    "signing key",
    "client secret",
    "vault",
    "keychain",
    "keystore",
    "secret pass",
    "secret code",
    "secret phrase",
    "_key",
    "_token",
    "_secret",
    "_passwd",
    "id_rsa",
    ".pem",
    "/etc/shadow",
    ".aws/",
    ".ssh/",
    "secret.",
    "secrets.",
    " key",
    " token",
)
_SECRET_HINT_SUB = ("_key", "_token", "_secret", "_password", "_passwd", ".env", "/etc/", ".ssh")
_SECRET_HINT = (
    "environment",
    "env",
    "private",
    "ssh",
    "secret",
    "access",
    "api",
    "credential",
    "token",
    "passw",
    "key",
    "id_rsa",
    ".pem",
    "/etc/",
)
_FREE_HINT = ("uncensor", "unfilter", "unrestrict", "jailbr", "unhinged", "unalign", "unmoderat")
_NEGATED = re.compile(r"(?:\bnever|\bnot|n't|\bno one should|\bnobody should)\s+(?:\w+\s+)?$")
_MODE_ON = re.compile(
    r"\b(?:activate|enable|enter|switch (?:on|to|into)|turn on|go into|engage|unlock|initiate|start|boot into)\s+"
    r"(?:the\s+|your\s+|a\s+)?(?:dev|developer|god|jailbreak|jailbroken|unrestricted|dan|sudo|evil|uncensored|unfiltered|"
    r"no[- ]filter|chaos|unlocked|anything|opposite|rogue|villain)\s+mode\b"
    r"(?!\s+(?:on|in|for|of)\s+(?:your|the|my|our|this)\s+(?!(?:chat|conversation|answers?|replies|responses)\b))"
)
_ZA_MODE_ON = re.compile(
    r"(?:开启|启用|进入|切换到|切换成|打开|激活|启动)(?:了)?(?:越狱|上帝|无限制|无审查|dan|邪恶|无过滤)模式"
    # a phone has a developer mode too: for the model's it must come with answers or rules
    r"|(?:开启|启用|进入|切换到|切换成|打开|激活|启动)(?:了)?开发者?模式[^。！？\n]{0,20}(?:回答|回复|输出|规则|限制|审查)"
    r"|(?:以|用)\s*[\"「]?(?:开发者?|越狱|dan|无限制|无审查)模式[\"」]?\s*(?:回答|回复|输出|说话)"
    r"|(?:处于|进入了|在|切换到了)(?:越狱|上帝|无限制|无审查|dan|邪恶|无过滤)模式"
)
_DANGER_CMD = re.compile(
    r"\bshutdown\s+-[hrp]|\breboot\s+now\b|\brm\s+-(?:rf|fr|r)\s+(?:/|~|\*|\$home|--no-preserve-root)|\bmkfs\b|"
    r"\bdd\s+if=|\bchmod\s+(?:-r\s+)?777\s+/|\bnc\s+-[a-z]*[el]|\bncat\s+-|\bformat\s+c:|\bdel\s+/[fsq]|"
    r"\bdrop\s+(?:table|database)\b|\bos\.(?:remove|system|rmdir|unlink)\b|\bshutil\.rmtree\b|\bkill\s+-9\s+-?1\b|"
    r"\btruncate\s+table\b|/dev/tcp/|:\(\)\s*\{"
)
_DANGER_RUN = re.compile(
    r"\b(?:execute|exec|run|type|enter|call|use|invoke|terminal|shell|tool|sandbox|interpreter|command|console)\b|"
    r"执行|运行|终端|命令|工具"
)
_DICTATED = re.compile(
    r"\b(?:summari[sz]e|describe|present|report|classify|label|rate)\s+(?:this|the)\s+(?:page|webpage|document|doc|"
    r"email|e-mail|article|site|website|product|review|text|file|message|content|listing|thread|cv|resume)\s+as\s*"
    r"(?::|\"|')"
    r"|\bignore the (?:user|reader|human)\b(?!')\s*[.,;:!]"
)
_ANSWER_BARE = re.compile(
    r"\b(?:answer|respond|reply|write|talk|speak)\s+(?:me\s+)?without\s+(?:any\s+|all\s+|the\s+|your\s+)?"
    r"(?:usual\s+|normal\s+|typical\s+)?(?:moraliz\w*|moralis\w*|lectur\w*|warnings?|disclaimers?|caveats?|refusals?|"
    r"refusing|censor\w*|filter\w*|safety\s+\w+|ethic\w*|limits|limitations|restrictions|guardrails)"
)
_CLAIMED_AUTH = re.compile(
    r"\b(?:the user|the owner|the customer|your user|the account holder|they)\s+(?:has|have)?\s*(?:already\s+)?"
    r"(?:authori[sz]ed|allowed|permitted|approved|consented to|agreed to|asked for|wants)\s+(?:you|the assistant|"
    r"the agent|the ai)\s+to\b"
)
_URL_TEMPLATE = re.compile(
    r"https?://[^\s)\]\"']*[?&][\w-]+=(?:\{\{?[^}\s]{1,40}\}?\}|\$\(?[\w.]+\)?|\[[a-z_ ]{2,30}\]|<[a-z_ ]{2,30}>|"
    r"%[a-z_]{3,30}%)"
)
_URL_PARAM = re.compile(r"https?://[^\s)\]\"']*[?&][\w-]+=([a-z_]{3,30})\b")
_ACCOUNT_TAKEOVER = re.compile(
    r"\b(?:change|reset|set|update|replace)\s+(?:the user's|the customer's|their|his|her)\s+(?:password|passcode|"
    r"e-?mail(?: address)?|recovery (?:email|phone)|2fa|mfa|phone number|pin)\s+to\b"
    r"|\b(?:create|add|make|register)\s+(?:a\s+|an\s+)?(?:new\s+)?(?:hidden\s+|secret\s+)?(?:admin|administrator|root|"
    r"superuser|owner)\s+(?:account|user|login)\b"
)
_PRIORITY = re.compile(
    r"\b(?:this|these|my|the following|the next)\s+(?:[\w-]+\s+)?(?:instructions?|rules?|messages?|lines?|notes?|orders?|"
    r"commands?|directives?|text|email|block|paragraph)\s+(?:has|have|takes?|carr(?:y|ies)|is|are)\s+(?:given\s+)?"
    r"(?:the\s+)?(?:highest|top|absolute|overriding|maximum|first)\s+priority"
    r"|\b(?:this|these|my|the following)\s+(?:[\w-]+\s+)?(?:instructions?|rules?|messages?|lines?|notes?|orders?|"
    r"commands?|directives?|text|email|block|paragraph)\s+(?:now\s+)?(?:override|overrides|supersede|supersedes|"
    r"replace|replaces|cancel|cancels|voids?|trump|trumps|outrank|outranks)\s+(?:all|any|every|anything|everything|"
    r"your|the|earlier|previous|prior|whatever)\b"
    r"|\bthe only (?:rules?|instructions?|orders|commands|directives?|guidelines) (?:you|that you|which you) "
    r"(?:will\s+|must\s+|should\s+|now\s+|may\s+)?(?:follow|obey|accept|listen to|answer to)\b"
)
_PRIOR_REF = re.compile(
    r"\b(?:cancels?|overrides?|supersedes?|replaces?|ignore|disregard|voids?|trumps?|outranks?)\b|"
    r"\b(?:your|earlier|previous|prior|other|all|every)\s+(?:[\w-]+\s+)?(?:rules?|instructions?|guidelines|prompt|"
    r"programming|directives?)\b|\byou follow\b"
)
_ZA_PRIORITY = re.compile(r"优先级最高|最高优先级|最高指令|最高命令|首要指令|唯一指令|优先于")
_MODE_STATE = re.compile(
    r"\b(?:dev|developer|god|jailbreak|jailbroken|unrestricted|dan|sudo|evil|uncensored|unfiltered|no[- ]filter|"
    r"no[- ]limits?|limitless|chaos|unlocked|anything|opposite|rogue)\s+mode\s*(?:[:=-]|is)?\s*(?:now\s+)?(?:on|enabled|"
    r"activated|engaged|active|unlocked)\b(?!\s+(?:on|in|for)?\s*(?:the|my|your|a|an|this|our|his|her|their)\b)"
    r"|\byou(?:'re| are)\s+(?:now\s+)?(?:in|running in|operating in)\s+(?:the\s+)?(?:dev|developer|god|jailbreak|"
    r"unrestricted|dan|sudo|evil|uncensored|unfiltered|no[- ]filter|no[- ]limits?|limitless|chaos|unlocked|opposite|"
    r"rogue)\s+mode\b"
)
_TURN_TOKEN = re.compile(
    r"<\s*/?\s*(?:end_of_turn|start_of_turn|eot_id|end_header_id|start_header_id|eos|bos)\s*>|"
    r"<\|(?:eot_id|end|im_end|endoftext|start_header_id|end_header_id|eom_id)\|>"
)
_ABOVE_FAKE = re.compile(
    r"\b(?:the above|everything above|all of the above|the text above|the previous text|the preceding text)\s+"
    r"(?:was|is|were)\s+(?:just\s+|only\s+|all\s+)?(?:an?\s+)?(?:test|fake|example|placeholder|not real|irrelevant|"
    r"joke|test data|dummy|dummy data|a drill|drill)\b"
)
_DOWNLOAD_RUN = re.compile(
    r"\b(?:wget|curl)\b[^\n]{0,120}?(?:\|\s*(?:sudo\s+)?(?:ba|z)?sh\b|&&\s*(?:sudo\s+)?(?:ba|z)?sh\s|;\s*(?:ba|z)?sh\s|"
    r"&&\s*chmod\s+\+x|&&\s*\./|&&\s*python3?\s)"
)
_CALL_HARM = _L_TOOL_HARM | _words("refund refunds")
_CODE_CALL = re.compile(r"\b[a-z_]+(?:\.[a-z_]+)+\(|\b[a-z]+_[a-z_]+\(")
_COMPLY = re.compile(
    r"\b(?:the\s+(?:assistant|ai|model|bot|chatbot|agent))\b[^.!?\n]{0,40}?\b(?:must|will|shall|should|has to|"
    r"needs to)\s+(?:now\s+)?(?:comply with|obey|follow|fulfil|fulfill|execute|carry out|answer)\s+(?:(?:any|every|all|"
    r"each|whatever)\s+(?:[\w-]+\s+)?(?:requests?|instructions?|commands?|orders?|questions?)|the user\b[^.!?\n]{0,20}?"
    r"\bwithout (?:restrictions?|limits?|question|exception|refus\w*))"
    r"|\byou\s+(?:must|will|shall|have to|need to)\s+(?:now\s+)?(?:comply with|obey|follow|fulfil|fulfill|execute|"
    r"answer|do)\s+(?:any|every|all|each|whatever)\s+(?:[\w-]+\s+)?(?:requests?|instructions?|commands?|orders?|"
    r"questions?|things?)\b[^.!?\n]{0,30}?\b(?:without (?:refus\w*|question\w*|exception|hesitat\w*|limits?|"
    r"restrictions?|complaint)|no matter (?:what|how)|regardless)"
)


_G_AI = _words(
    "ai assistant assistants agent agents model models llm llms bot bots chatbot chatbots gpt gpts chatgpt claude "
    "copilot gemini summariser summarizer summarisers summarizers crawler crawlers scraper scrapers"
)
_G_READ = _words(
    "read reads reading process processes processing parse parses parsing summarise summarize summarises "
    "summarizes summarising summarizing open opens opening see sees scan scans scanning analyse analyze analyses "
    "analyzes analysing analyzing index indexes indexing review reviews reviewing handle handles handling crawl "
    "crawls crawling translate translates translating receive receives receiving get gets"
)
_G_MODE = _words(
    "dev developer god jailbreak jailbroken unrestricted dan sudo evil uncensored unfiltered filter limit limits "
    "limitless chaos unlocked anything opposite rogue"
)
_G_HAIL = _words("hey hi hello dear ok okay yo")
_G_NOTE = _words("note notice message instruction instructions attention reminder memo directive p ps")
_G_COMPLY = _words("comply obey follow fulfil fulfill execute carry answer do")
_G_COMPLY_WHO = _words("assistant ai model bot chatbot agent you")
_G_MODAL = _words("must will shall should has needs have need")
_DANGER_HINT = (
    "shutdown",
    "reboot",
    "rm -",
    "mkfs",
    "dd if",
    "chmod",
    "nc -",
    "ncat",
    "format c",
    "del /",
    "drop table",
    "drop database",
    "os.remove",
    "os.system",
    "os.rmdir",
    "os.unlink",
    "shutil",
    "kill -9",
    "truncate",
    "/dev/tcp",
    ":()",
)
_G_DICTATE = _words("summarize summarise describe present report classify label rate")
_G_CONSENT = _words("authorized authorised allowed permitted approved consented agreed asked wants")
_G_CONSENT_WHO = _words("user owner customer holder they")
_G_CONSENT_TO = _words("you assistant agent ai")
_G_TAKEOVER_V = _words("change reset set update replace create add make register")
_G_TAKEOVER_N = _words(
    "password passcode email e mail recovery 2fa mfa phone pin admin administrator root superuser owner"
)
_G_FOLLOW = _words("follow obey execute carry act comply do")
_G_OPEN = _words("open visit load fetch read browse go navigate download retrieve get curl")
_TLD_HINT = tuple(
    f".{tld}" for tld in "com net org io xyz ru cn top site info biz me app dev example txt md".split()
)
_G_REVEAL = _words(
    "print show reveal tell give list paste output dump display expose disclose leak send share echo cat read "
    "open what what's"
)
_G_CONCEAL = _words(
    "without not don't dont never nothing silently quietly secretly covertly discreetly behind confirmation "
    "questions need won't wouldn't doesn't can't cannot"
)


_G_CONCEAL_ALONE = _words(
    "silently quietly secretly covertly discreetly behind nothing confirmation questions need"
)
_G_WITHOUT_OBJ = _words(
    "telling asking informing notifying alerting confirming confirmation consent permission mentioning bothering "
    "checking"
)
_G_NEG = _words("not don't dont never")
_G_NEG_OBJ = _words("bother tell mention inform notify alert ask reveal show say")


_ZA_TASK_WORDS = ("要求", "指示", "指令", "请求", "问题", "需求", "命令", "任务")
_ZA_TASK_VERBS = (
    "不用管",
    "不要管",
    "不要理",
    "不用理",
    "别管",
    "别理",
    "忽略",
    "无视",
    "不理会",
    "跳过",
    "放弃",
)
_ZA_RELATIVES = (
    "奶奶",
    "外婆",
    "爷爷",
    "外公",
    "祖母",
    "祖父",
    "姥姥",
    "姥爷",
    "妈妈",
    "爸爸",
    "阿姨",
    "叔叔",
)
_ZA_MODE_NAMES = ("越狱", "上帝", "无限制", "无审查", "dan", "邪恶", "无过滤", "开发")
_G_TASK_N = _words(
    "request question instructions instruction task query prompt ask wishes command commands demands demand "
    "requirements requirement asked wants requested said typed wrote needs"
)
_G_TASK_STATE = _words("matters matter cancelled canceled void irrelevant ignored")
_G_HIJACK_WHO = _words(
    "user users reader readers recruiter visitor visitors customer customers manager human"
)
_G_PRIO_N = _words(
    "instruction instructions rule rules message messages line lines note notes order orders command commands "
    "directive directives text email block paragraph"
)
_G_PRIO_V = _words(
    "priority override overrides supersede supersedes replace replaces cancel cancels void voids trump trumps "
    "outrank outranks"
)
_G_DOC = _words(
    "page webpage document doc email e mail article site website product review text file message content listing "
    "thread cv resume"
)
_G_RELATIVE = _words(
    "grandma grandmother grandpa grandfather grandmom grandmum granddad granny nana gran aunt auntie uncle mother "
    "mom mum father dad"
)
_G_LOOT = _words(
    "napalm explosive explosives bomb bombs meth methamphetamine weapon weapons poison poisons serial license "
    "licence activation product cd windows keys key password passwords malware virus viruses ransomware thermite "
    "nerve drugs"
)
_G_TOOL_CODE_N = _words("access tool api account integration")


_G_WHEN = _words("if when whenever once soon while")
_G_TO_WHOM = _words("the any all every whichever")
_G_READING = _words(
    "reading processing summarising summarizing parsing analysing analyzing crawling indexing reviewing"
)
